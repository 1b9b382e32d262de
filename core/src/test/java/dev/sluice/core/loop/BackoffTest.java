package dev.sluice.core.loop;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
  @Test
  void growsExponentiallyWithinBounds() {
    Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10));
    for (int i = 0; i < 1000; i++) {
      assertThat(b.delayNs(1)).isBetween(100_000_000L, 100_000_000L);
      assertThat(b.delayNs(4)).isBetween(400_000_000L, 800_000_000L);
      assertThat(b.delayNs(60)).isBetween(5_000_000_000L, 10_000_000_000L);
      assertThat(b.delayNs(Long.MAX_VALUE)).isLessThanOrEqualTo(10_000_000_000L);
    }
  }

  @Test
  void neverBelowMinEvenWithJitter() {
    Backoff b = new Backoff(Duration.ofMillis(300), Duration.ofMillis(400));
    for (int i = 0; i < 1000; i++) {
      assertThat(b.delayNs(2)).isBetween(300_000_000L, 400_000_000L);
    }
  }
}
