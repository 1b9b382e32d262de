package dev.sluice.receiver;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

  @Test
  void growsExponentiallyWithinBoundsAndResets() {
    Duration min = Duration.ofMillis(100);
    Duration max = Duration.ofSeconds(5);
    Backoff backoff = new Backoff(min, max);
    assertThat(backoff.nextDelay()).isEqualTo(min);
    assertThat(backoff.nextDelay()).isBetween(min, Duration.ofMillis(200));
    assertThat(backoff.nextDelay()).isBetween(Duration.ofMillis(200), Duration.ofMillis(400));
    for (int i = 0; i < 100; i++) {
      assertThat(backoff.nextDelay()).isBetween(min, max);
    }
    assertThat(backoff.nextDelay()).isGreaterThanOrEqualTo(Duration.ofMillis(2500));
    backoff.reset();
    assertThat(backoff.nextDelay()).isEqualTo(min);
  }

  @Test
  void roundsSubMillisecondRetryDelaysUp() {
    assertThat(Dispatcher.retryAfterMs(Duration.ZERO)).isZero();
    assertThat(Dispatcher.retryAfterMs(Duration.ofNanos(10))).isEqualTo(1);
    assertThat(Dispatcher.retryAfterMs(Duration.ofSeconds(2))).isEqualTo(2000);
  }
}
