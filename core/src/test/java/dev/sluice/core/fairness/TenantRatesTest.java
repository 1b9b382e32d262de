package dev.sluice.core.fairness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.config.TenantLimit;
import dev.sluice.db.QueueOptions;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A tenant at its rate is passed over, counted and published; the others are not held back. */
class TenantRatesTest {
  static final long MS = 1_000_000L;

  static TenantRates rates(String comment, TenantLimit... overrides) {
    QueueOptions o = QueueOptions.parseComment("orders", "sluice_queue " + comment);
    return new TenantRates(TenantLimits.of(o, "orders", List.of(overrides)));
  }

  /** How many of {@code tenant}'s events one round lets go at {@code now}, up to {@code n}. */
  static int take(TenantRates r, String tenant, long now, int n) {
    int went = 0;
    while (went < n && r.mayTake(tenant, now)) {
      r.took(tenant, now);
      went++;
    }
    return went;
  }

  @Test
  void aBurstThenTheRateAndOnlyTheLimitedTenantIsPassedOver() {
    TenantRates r = rates("", new TenantLimit("orders", "noisy", null, null, 10, 3));
    assertThat(r.active()).isTrue();
    long t = 1_000 * MS;
    r.startRound(t);
    assertThat(take(r, "noisy", t, 100)).as("its burst").isEqualTo(3);
    assertThat(take(r, "quiet", t, 100)).as("no rate: not held").isEqualTo(100);
    assertThat(r.waits()).isEqualTo(1);
    assertThat(r.waitNs(t))
        .as("the next event is on schedule in a tenth of a second")
        .isEqualTo(100 * MS);

    r.startRound(t + 50 * MS);
    assertThat(r.limitedNow()).containsExactly("noisy");
    assertThat(take(r, "noisy", t + 50 * MS, 100)).as("not yet").isZero();
    r.startRound(t + 100 * MS);
    assertThat(take(r, "noisy", t + 100 * MS, 100))
        .as("one more after 100 ms at 10/s")
        .isEqualTo(1);

    // Over one second it gets its rate, not more.
    int went = 0;
    for (long now = t + 101 * MS; now <= t + 1100 * MS; now += 10 * MS) {
      r.startRound(now);
      went += take(r, "noisy", now, 100);
    }
    assertThat(went).isBetween(9, 11);
    r.startRound(t + 5_000 * MS);
    r.startRound(t + 5_001 * MS);
    assertThat(r.limitedNow()).as("nobody passed over in the last round").isEmpty();
  }

  @Test
  void theCommentsRateAppliesToEveryTenantAndItsDefaultBurstIsATenth() {
    TenantRates r = rates("tenant_max_rate=50");
    long t = 0;
    r.startRound(t);
    assertThat(take(r, "a", t, 100)).isEqualTo(5);
    assertThat(take(r, "b", t, 100)).isEqualTo(5);
    assertThat(rates("tenant_max_rate=50 tenant_burst=20").mayTake("a", t)).isTrue();
    TenantRates burst = rates("tenant_max_rate=50 tenant_burst=20");
    assertThat(take(burst, "a", t, 100)).isEqualTo(20);
    assertThat(
            take(
                rates("tenant_max_rate=50", new TenantLimit("*", "vip", null, null, 0, null)),
                "vip",
                t,
                100))
        .as("max_rate 0: no limit for this tenant")
        .isEqualTo(100);
  }

  @Test
  void withoutRatesNothingIsActive() {
    assertThat(rates("").active()).isFalse();
  }
}
