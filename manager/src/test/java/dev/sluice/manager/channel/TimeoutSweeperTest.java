package dev.sluice.manager.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sluice.core.loop.StackThrottle;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A publisher's timeout thread paces its sweeps on the publisher's ticker and survives a sweep that
 * throws, counted per channel; {@link PublisherFaults} logs a loop's stack at most every 10 s.
 */
class TimeoutSweeperTest {
  private static final Duration PERIOD = Duration.ofNanos(TimeoutSweeper.PERIOD_NS);

  private final FakeTicker ticker = new FakeTicker();
  private final PublisherFaults faults =
      new PublisherFaults("kafka test", ticker, false, TimeoutSweeper.LOOP);

  @Test
  void aSweepRunsEachTimeThePeriodPassesOnTheTickerAndNotWhileItStandsStill() throws Exception {
    AtomicInteger sweeps = new AtomicInteger();
    TimeoutSweeper sweeper =
        new TimeoutSweeper("test-timeout", ticker, faults, sweeps::incrementAndGet);
    sweeper.start();
    try {
      await()
          .during(Duration.ofMillis(300))
          .atMost(Duration.ofSeconds(2))
          .until(() -> sweeps.get() == 0);
      ticker.advance(PERIOD);
      await().atMost(Duration.ofSeconds(2)).until(() -> sweeps.get() == 1);
      await()
          .during(Duration.ofMillis(300))
          .atMost(Duration.ofSeconds(2))
          .until(() -> sweeps.get() == 1);
      ticker.advance(PERIOD.multipliedBy(3)); // one sweep late, not three
      await().atMost(Duration.ofSeconds(2)).until(() -> sweeps.get() == 2);
      await()
          .during(Duration.ofMillis(300))
          .atMost(Duration.ofSeconds(2))
          .until(() -> sweeps.get() == 2);
    } finally {
      sweeper.stop();
      sweeper.join(2000);
    }
  }

  @Test
  void aSweepThatThrowsIsCountedAndLoggedAndTheNextOneStillRuns() throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger(PublisherFaults.class);
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    logger.addAppender(logs);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    faults.register(registry, "orders-kafka");
    AtomicInteger sweeps = new AtomicInteger();
    TimeoutSweeper sweeper =
        new TimeoutSweeper(
            "test-timeout",
            ticker,
            faults,
            () -> {
              if (sweeps.incrementAndGet() <= 3) {
                throw new IllegalStateException("sweep " + sweeps.get() + " broke");
              }
            });
    sweeper.start();
    try {
      for (int i = 1; i <= 4; i++) {
        if (i == 3) {
          ticker.advance(Duration.ofNanos(StackThrottle.EVERY_NS)); // a stack again
        }
        sweep(sweeps, i);
      }
      assertThat(faults.loopErrors(TimeoutSweeper.LOOP)).isEqualTo(3);
      assertThat(
              registry
                  .get("sluice.channel.loop.errors")
                  .tags("channel", "orders-kafka", "loop", "timeout")
                  .functionCounter()
                  .count())
          .isEqualTo(3);
      // The stack of the first, one line for the second (within 10 s), the stack of the third.
      assertThat(logs.list)
          .extracting(ILoggingEvent::getLevel)
          .containsExactly(Level.ERROR, Level.WARN, Level.ERROR);
      assertThat(logs.list.get(0).getThrowableProxy()).isNotNull();
      assertThat(logs.list.get(1).getThrowableProxy()).isNull();
      assertThat(logs.list.get(1).getFormattedMessage())
          .isEqualTo(
              "kafka test: the timeout loop failed again, continuing:"
                  + " java.lang.IllegalStateException: sweep 2 broke");
    } finally {
      sweeper.stop();
      sweeper.join(2000);
      logger.detachAppender(logs);
    }
  }

  /**
   * Moves the ticker a period at a time until the sweeper has swept {@code n} times (a move made
   * before the thread began its wait only sets its next deadline, so one move may not be enough).
   */
  private void sweep(AtomicInteger sweeps, int n) {
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () -> {
              if (sweeps.get() < n) {
                ticker.advance(PERIOD);
              }
              return sweeps.get() >= n;
            });
  }

  @Test
  void stopEndsTheThreadThoughTheTickerStandsStill() throws Exception {
    AtomicInteger sweeps = new AtomicInteger();
    TimeoutSweeper sweeper =
        new TimeoutSweeper("test-timeout-stop", ticker, faults, sweeps::incrementAndGet);
    sweeper.start();
    sweeper.stop();
    sweeper.join(2000);
    assertThat(
            Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("test-timeout-stop")))
        .isFalse();
    assertThat(sweeps.get()).isZero();
  }
}
