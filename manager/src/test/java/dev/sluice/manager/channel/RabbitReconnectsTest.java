package dev.sluice.manager.channel;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * When a RabbitMQ publisher connects next, and what an outage counts and logs: on a fake ticker.
 */
class RabbitReconnectsTest {
  private static final long MIN = RabbitReconnects.RECONNECT.minNs();
  private static final long MAX = RabbitReconnects.RECONNECT.maxNs();

  private final FakeTicker ticker = new FakeTicker();
  private final PublisherFaults faults =
      new PublisherFaults("rabbitmq test", ticker, true, RabbitLink.LOOP);
  private final RabbitReconnects reconnects = new RabbitReconnects("rabbitmq test", ticker, faults);
  private final Logger logger = (Logger) LoggerFactory.getLogger(RabbitPublisher.class);
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

  @BeforeEach
  void listen() {
    logs.start();
    logger.addAppender(logs);
  }

  @AfterEach
  void stopListening() {
    logger.detachAppender(logs);
  }

  @Test
  void theFirstAttemptIsDueAtOnceAndEachFailureWaitsTheNextStepOfTheBackoff() {
    assertThat(reconnects.due()).isTrue();
    reconnects.failed("ConnectException: Connection refused");
    // The first step is exactly the minimum (equal jitter never goes under it).
    assertThat(reconnects.due()).isFalse();
    assertThat(reconnects.waitNs(Long.MAX_VALUE)).isEqualTo(MIN);
    ticker.advanceNanos(MIN - 1);
    assertThat(reconnects.due()).isFalse();
    ticker.advanceNanos(1);
    assertThat(reconnects.due()).isTrue();
    assertThat(reconnects.waitNs(Long.MAX_VALUE)).isZero();

    // Later steps double, with jitter (half of the step is random), up to the maximum.
    for (int i = 2; i <= 12; i++) {
      reconnects.failed("ConnectException: Connection refused");
      long step = Math.min(MAX, MIN << (i - 1));
      long wait = reconnects.waitNs(Long.MAX_VALUE);
      assertThat(wait).as("wait after %d failed attempts", i).isBetween(step / 2, step);
      ticker.advanceNanos(wait);
      assertThat(reconnects.due()).isTrue();
    }
    assertThat(faults.connectFailures()).isEqualTo(12);
    // A wait is never longer than the caller's own.
    reconnects.failed("ConnectException: Connection refused");
    assertThat(reconnects.waitNs(1_000)).isEqualTo(1_000);
  }

  @Test
  void aLostConnectionWaitsTheFirstStepAgainAndAFailedTurnWaitsLikeAFailedAttempt() {
    reconnects.failed("refused");
    reconnects.failed("refused");
    ticker.advanceNanos(MAX);
    reconnects.connected();
    reconnects.lost();
    assertThat(reconnects.waitNs(Long.MAX_VALUE)).isEqualTo(MIN);
    ticker.advanceNanos(MIN);
    assertThat(reconnects.due()).isTrue();

    reconnects.turnFailed();
    assertThat(reconnects.waitNs(Long.MAX_VALUE)).isEqualTo(MIN);
    assertThat(faults.connectFailures()).as("a failed turn is no connection attempt").isEqualTo(2);
  }

  @Test
  void anOutageIsLoggedOncePerReasonAndItsEndSaysHowLongAndHowManyAttempts() {
    reconnects.connected();
    reconnects.lost();
    for (int i = 0; i < 25; i++) {
      ticker.advance(Duration.ofSeconds(5));
      reconnects.failed("ConnectException: Connection refused");
    }
    ticker.advance(Duration.ofSeconds(5));
    reconnects.failed("AuthenticationFailureException: ACCESS_REFUSED");
    reconnects.failed("AuthenticationFailureException: ACCESS_REFUSED");
    ticker.advance(Duration.ofSeconds(5));
    reconnects.connected();

    List<String> warnings = messages(Level.WARN);
    assertThat(warnings).hasSize(2);
    assertThat(warnings.get(0)).contains("cannot connect: ConnectException: Connection refused");
    assertThat(warnings.get(1)).contains("ACCESS_REFUSED");
    assertThat(messages(Level.INFO))
        .containsExactly(
            "rabbitmq test: connected",
            "rabbitmq test: connected again after 135000 ms (27 attempts failed)");
    assertThat(faults.connectFailures()).isEqualTo(27);

    // The next outage is logged again, though its reason is the last one's.
    reconnects.lost();
    reconnects.failed("AuthenticationFailureException: ACCESS_REFUSED");
    assertThat(messages(Level.WARN)).hasSize(3);
  }

  private List<String> messages(Level level) {
    return logs.list.stream()
        .filter(e -> e.getLevel() == level)
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }
}
