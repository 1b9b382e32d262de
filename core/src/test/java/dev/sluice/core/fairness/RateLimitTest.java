package dev.sluice.core.fairness;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** max_qps as a generic cell rate: bursts of a tenth of a second, then one event per interval. */
class RateLimitTest {
  static final long MS = 1_000_000;

  @Test
  void noLimitLetsEverythingGo() {
    RateLimit r = new RateLimit(0);
    assertThat(r.limited()).isFalse();
    r.took(0, 1_000_000);
    assertThat(r.available(0)).isEqualTo(Integer.MAX_VALUE);
    assertThat(r.waitNs(0)).isZero();
  }

  @Test
  void aBurstOfATenthOfASecondThenOneEventPerInterval() {
    RateLimit r = new RateLimit(100); // 10 ms apart, bursts of 10
    long t = 5_000 * MS;
    assertThat(r.available(t)).isEqualTo(10);
    r.took(t, 10);
    assertThat(r.available(t)).isZero();
    assertThat(r.waitNs(t)).isEqualTo(10 * MS);
    assertThat(r.available(t + 9 * MS)).isZero();
    assertThat(r.available(t + 10 * MS)).isEqualTo(1);
    r.took(t + 10 * MS, 1);
    assertThat(r.available(t + 10 * MS)).isZero();
    // Idle time refills the burst, and no more.
    assertThat(r.available(t + 10_000 * MS)).isEqualTo(10);
  }

  @Test
  void aSecondHoldsAtMostTheRatePlusOneBurst() {
    RateLimit r = new RateLimit(50);
    long t = 0;
    int sent = 0;
    for (long now = t; now <= t + 1_000 * MS; now += MS) {
      int n = r.available(now);
      r.took(now, n);
      sent += n;
    }
    assertThat(sent).isBetween(50, 50 + 5);
  }

  @Test
  void aLowRateStillLetsOneEventGo() {
    RateLimit r = new RateLimit(1);
    assertThat(r.available(0)).isEqualTo(1);
    r.took(0, 1);
    assertThat(r.waitNs(0)).isEqualTo(1_000 * MS);
  }
}
