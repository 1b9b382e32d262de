package dev.sluice.receiver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A manager that goes away (its gRPC server on the loopback port closed) and comes back on the same
 * port: the receiver retries with exponential backoff up to its reconnect-max, whatever the status
 * (UNAVAILABLE included), and logs the outage once: one WARN, DEBUG per later attempt, one INFO
 * when subscribed again.
 */
class ReceiverOutageTest extends ReceiverTestSupport {
  private static final Pattern NEXT = Pattern.compile("next in (\\d+) ms");

  private final Logger connectorLog = (Logger) LoggerFactory.getLogger(Connector.class);
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private Level level;

  @BeforeEach
  void captureLogs() {
    level = connectorLog.getLevel();
    connectorLog.setLevel(Level.DEBUG);
    logs.start();
    connectorLog.addAppender(logs);
  }

  @AfterEach
  void releaseLogs() {
    connectorLog.detachAppender(logs);
    connectorLog.setLevel(level);
  }

  @Test
  void aManagerThatGoesAwayIsRetriedWithGrowingDelaysAndLoggedOnce() throws Exception {
    Duration max = Duration.ofMillis(1600);
    SluiceReceiver receiver =
        startReceiver(e -> {}, b -> b.reconnectBackoff(Duration.ofMillis(100), max));
    int port = server.port();
    logs.list.clear();

    server.close(); // the manager goes away; its port refuses connections

    // Delays in [base/2, base] with base 100, 200, 400, 800, 1600 ms: at least 50 + 100 + 200 +
    // 400 + 800 + 800 ms pass before the 7th attempt, so 3 s see at most 7; a 250 ms probe would
    // have made 12 or more.
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(4))
        .until(() -> receiver.stats().reconnects() <= 7);
    assertThat(receiver.stats().reconnects()).isGreaterThanOrEqualTo(3);
    assertThat(receiver.stats().streamsConnected()).isZero();

    List<Long> delays = new ArrayList<>();
    for (ILoggingEvent e : List.copyOf(logs.list)) {
      Matcher m = NEXT.matcher(e.getFormattedMessage());
      if (m.find()) {
        delays.add(Long.parseLong(m.group(1)));
      }
    }
    assertThat(delays).hasSizeGreaterThanOrEqualTo(3).allMatch(d -> d <= max.toMillis());
    // Each base doubles the one before, so the jittered delays never shrink until the cap.
    assertThat(delays.subList(0, 3)).isSorted();
    assertThat(warnings()).as("one WARN for the whole outage").hasSize(1);
    assertThat(warnings().get(0).getFormattedMessage())
        .contains("reconnecting with backoff up to 1600 ms");

    TestSluiceServer back = extraServer(port); // the manager is back on the same port
    await().atMost(Duration.ofSeconds(10)).until(() -> back.subscribes.size() == 1);
    assertThat(receiver.awaitSubscribed(WAIT)).isTrue();
    assertThat(warnings()).hasSize(1);
    assertThat(
            logs.list.stream()
                .filter(e -> e.getLevel() == Level.INFO)
                .map(ILoggingEvent::getFormattedMessage))
        .singleElement()
        .asString()
        .contains("again after", "failed attempt(s)");
  }

  @Test
  void aManagerThatDoesNotServeTheQueueIsRetriedWithTheSameBackoff() {
    server.refuseSubscribe =
        io.grpc.Status.FAILED_PRECONDITION.withDescription("no shard of q led here");
    SluiceReceiver receiver =
        SluiceReceiver.builder()
            .target(server.target())
            .queue("q")
            .handler(e -> {})
            .reconnectBackoff(Duration.ofMillis(100), Duration.ofMillis(1600))
            .build();
    try {
      receiver.start();
      await()
          .during(Duration.ofSeconds(3))
          .atMost(Duration.ofSeconds(4))
          .until(() -> server.subscribes.size() <= 8);
      assertThat(server.subscribes.size()).isGreaterThanOrEqualTo(3);
      assertThat(warnings()).hasSize(1);
      assertThat(warnings().get(0).getFormattedMessage()).contains("does not serve queue q");

      server.refuseSubscribe = null;
      assertThat(receiver.awaitSubscribed(Duration.ofSeconds(10))).isTrue();
    } finally {
      receiver.abort();
    }
  }

  private List<ILoggingEvent> warnings() {
    return logs.list.stream().filter(e -> e.getLevel() == Level.WARN).toList();
  }
}
