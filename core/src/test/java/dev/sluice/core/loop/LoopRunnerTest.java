package dev.sluice.core.loop;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Every loop's runner: a failed pass is counted, backed off by the one backoff, then retried. */
class LoopRunnerTest {
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final LoopFaults faults = new LoopFaults(registry, "s", "q", new FakeTicker());

  double errors(String loop) {
    return registry.find("sluice.loop.errors").tags("loop", loop).counter().count();
  }

  @Test
  void failuresInARowBackOffFromFiftyMillisecondsToFiveSeconds() {
    LoopRunner r = new LoopRunner(faults, "acks");
    long ms = 1_000_000;
    assertThat(r.failed(new IllegalStateException("down"))).isEqualTo(50 * ms);
    assertThat(r.failed(new IllegalStateException("down"))).isBetween(50 * ms, 100 * ms);
    assertThat(r.failed(new IllegalStateException("down"))).isBetween(100 * ms, 200 * ms);
    for (int i = 0; i < 20; i++) {
      r.failed(new IllegalStateException("down"));
    }
    assertThat(r.failed(new IllegalStateException("down"))).isBetween(2_500 * ms, 5_000 * ms);
    assertThat(errors("acks")).isEqualTo(24);
    r.ok();
    assertThat(r.failed(new IllegalStateException("down"))).as("starts over").isEqualTo(50 * ms);
  }

  @Test
  void aLoopGoesOnAfterFailedPassesAndCountsThem() {
    LoopRunner r =
        new LoopRunner(faults, "poller", new Backoff(Duration.ofMillis(1), Duration.ofMillis(2)));
    int[] passes = {0};
    r.run(
        () -> passes[0] < 5,
        () -> {
          passes[0]++;
          if (passes[0] <= 3) {
            throw new OutOfMemoryError("injected");
          }
        });
    assertThat(passes[0]).isEqualTo(5);
    assertThat(errors("poller")).isEqualTo(3);
    assertThat(r.failures()).as("a pass that went through resets the backoff").isZero();
  }
}
