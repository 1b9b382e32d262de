package dev.sluice.core.fairness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.db.QueueOptions;
import org.junit.jupiter.api.Test;

/** Credits by tenant as a pure data structure: caps and the reserve. */
class TenantCreditsTest {
  static TenantCredits credits(String options) {
    QueueOptions o = QueueOptions.parseComment("q", ("sluice_queue " + options).strip());
    return new TenantCredits(TenantLimits.of(o), o.fair(), o.tenantReserve());
  }

  @Test
  void theReserveIsTenPercentRoundedAndAtLeastOne() {
    TenantCredits c = credits("");
    assertThat(c.reserve(1)).isZero();
    assertThat(c.reserve(4)).isEqualTo(1);
    assertThat(c.reserve(16)).isEqualTo(2);
    assertThat(c.reserve(100)).isEqualTo(10);
    assertThat(credits("tenant_reserve=25%").reserve(16)).isEqualTo(4);
  }

  @Test
  void noReserveAtZeroPercent() {
    TenantCredits c = credits("tenant_reserve=0%");
    assertThat(c.reserve(100)).isZero();
    c.take("noisy");
    c.take("quiet");
    assertThat(c.mayTake("noisy", () -> 1, () -> 16)).isTrue();
  }

  @Test
  void aTenantAloneIsNeverHeldBackByTheReserve() {
    TenantCredits c = credits("");
    for (int i = 0; i < 15; i++) {
      assertThat(c.mayTake("noisy", () -> 16, () -> 16)).isTrue();
      c.take("noisy");
    }
    assertThat(c.mayTake("noisy", () -> 1, () -> 16)).isTrue();
  }

  @Test
  void onceATenantWithNothingInFlightCameInTheBusyOneLeavesTheReserve() {
    TenantCredits c = credits("");
    c.take("noisy");
    c.take("quiet"); // nothing in flight, next to a busy tenant: the reserve stands
    assertThat(c.mayTake("noisy", () -> 3, () -> 16)).isTrue();
    assertThat(c.mayTake("noisy", () -> 2, () -> 16)).isFalse();
    assertThat(c.mayTake("other", () -> 1, () -> 16)).as("nothing in flight").isTrue();
    c.giveBack("quiet");
    c.giveBack("noisy");
    assertThat(c.held("noisy")).isZero();
    assertThat(c.mayTake("noisy", () -> 1, () -> 16)).as("nothing in flight").isTrue();
  }

  @Test
  void theInFlightCapHoldsWhateverIsFree() {
    TenantCredits c = credits("tenant_max_in_flight=2");
    c.take("a");
    c.take("a");
    assertThat(c.mayTake("a", () -> 100, () -> 100)).isFalse();
    assertThat(c.mayTake("b", () -> 100, () -> 100)).isTrue();
    c.dispatched("a", 0, 0);
    assertThat(c.dispatchedTotal("a")).isEqualTo(1);
  }

  @Test
  void waitsAddUpAndTheLongestRecentOneIsKeptTenToTwentySeconds() {
    TenantCredits c = credits("");
    long s = 1_000_000_000L;
    long t0 = 1_000 * s;
    c.dispatched("a", 3 * s, t0);
    c.dispatched("a", 1 * s, t0 + 2 * s);
    c.dispatched("b", 5 * s, t0);
    assertThat(c.waitNsTotal("a")).isEqualTo(4 * s);
    assertThat(c.dispatchedTotal("a")).isEqualTo(2);
    assertThat(c.recentMaxWaitNs("a", t0 + 3 * s)).isEqualTo(3 * s);
    assertThat(c.recentMaxWaitNs("b", t0 + 3 * s)).as("tenants apart").isEqualTo(5 * s);
    // In the next bucket the longest wait of the one before still counts...
    c.dispatched("a", 2 * s, t0 + 12 * s);
    assertThat(c.recentMaxWaitNs("a", t0 + 15 * s)).isEqualTo(3 * s);
    // ...and is forgotten one bucket later: the 2 s wait of the second bucket is what is left.
    assertThat(c.recentMaxWaitNs("a", t0 + 21 * s)).isEqualTo(2 * s);
    // Nothing fired for over two buckets: nothing waited recently.
    assertThat(c.recentMaxWaitNs("a", t0 + 45 * s)).isZero();
    assertThat(c.recentMaxWaitNs("nobody", t0)).isZero();
    assertThat(c.waitNsTotal("a")).as("the total never forgets").isEqualTo(6 * s);
  }

  @Test
  void fifoQueuesKeepNoReserve() {
    TenantCredits c = credits("fair=false");
    c.take("noisy");
    c.take("quiet");
    assertThat(c.mayTake("noisy", () -> 1, () -> 16)).isTrue();
  }

  @Test
  void idleTenantsAreForgottenAndBusyOnesKept() {
    TenantCredits c = credits("");
    long t0 = 1_000_000_000L;
    for (int i = 0; i < 10_000; i++) {
      c.take("t" + i);
      c.dispatched("t" + i, 0, t0);
      c.giveBack("t" + i);
    }
    c.take("busy"); // holds a credit for ever
    c.dispatched("busy", 0, t0);
    long later = t0 + TenantCredits.IDLE_EVICT_NS + TenantCredits.SWEEP_EVERY_NS;
    c.take("new");
    c.dispatched("new", 0, later);
    assertThat(c.tenants()).containsExactlyInAnyOrder("busy", "new");
    assertThat(c.held("busy")).isEqualTo(1);
  }
}
