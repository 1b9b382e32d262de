package dev.sluice.manager.security;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.ByteString;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.QueueStatsRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Issue 23, item 10: what a request may hold, and what it costs the manager. */
class BoundsTest {
  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(BoundsTest.class);
    h.createQueue("bounds_q", "max_attempts=1");
    h.startManager();
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
  }

  static Status.Code codeOf(Runnable call) {
    try {
      call.run();
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  @Test
  void aQueueNameLongerThanAnIdentifierIsRefusedAsInvalid() throws Exception {
    String longName = "q".repeat(65);
    assertThat(
            codeOf(
                () ->
                    h.blocking()
                        .cancel(CancelRequest.newBuilder().setQueue(longName).addIds(1).build())))
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(
            codeOf(
                () ->
                    h.blocking()
                        .queueStats(QueueStatsRequest.newBuilder().setQueue(longName).build())))
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
    RawReceiver r = h.rawReceiver("x".repeat(10_000), "r-long", 1);
    await().atMost(10, SECONDS).until(() -> r.error != null);
    assertThat(r.error.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(r.error.getDescription()).hasSizeLessThan(300);
  }

  @Test
  void aNackReasonIsBoundedAndCannotForgeLogLines() throws Exception {
    Logger batcher = (Logger) LoggerFactory.getLogger("dev.sluice.core.queue.write.AckBatcher");
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    batcher.addAppender(logs);
    try {
      RawReceiver r = h.rawReceiver("bounds_q", "r-nack", 1);
      await().atMost(10, SECONDS).until(() -> r.subscribed);
      h.exec("INSERT INTO bounds_q (order_id) VALUES (1)");
      Event e = r.events.poll(10, SECONDS);
      assertThat(e).isNotNull();
      r.nack(e, 0, "bad input\n2026-01-01 INFO forged: all is well\r" + "x".repeat(100_000));
      await().atMost(10, SECONDS).until(() -> h.queryLong("SELECT state FROM bounds_q") == 3);
      await()
          .atMost(10, SECONDS)
          .until(
              () -> logs.list.stream().anyMatch(l -> l.getFormattedMessage().contains("is dead")));
      String line =
          logs.list.stream()
              .map(ILoggingEvent::getFormattedMessage)
              .filter(m -> m.contains("is dead"))
              .findFirst()
              .orElseThrow();
      assertThat(line).doesNotContain("\n").doesNotContain("\r").contains("bad input\\n2026");
      assertThat(line.length()).isLessThan(1300);
      r.close();
    } finally {
      batcher.detachAppender(logs);
    }
  }

  @Test
  void aGrantsGlobsAreCompiledOnceNotOnEveryCall() {
    Grant g = new Grant(List.of("orders_*", "billing_?"), EnumSet.of(Action.SUBSCRIBE), List.of());
    Principal p = new Principal("p", Authenticator.sha256("t"), null, List.of(g), Limits.NONE);
    long before = QueueGlob.compiled();
    for (int i = 0; i < 10_000; i++) {
      assertThat(p.allows("orders_" + i, Action.SUBSCRIBE)).isTrue();
      assertThat(p.allows("billing_" + i, Action.SUBSCRIBE)).isEqualTo(i < 10);
    }
    assertThat(QueueGlob.compiled() - before).isZero();
  }

  @Test
  void verifyingManyAckTokensReusesOneMacPerThread() {
    byte[] key = new byte[32];
    DeliveryTokens tokens = new DeliveryTokens(s -> key);
    int n = 100_000; // what one 4 MiB Acks message can carry
    long before = DeliveryTokens.macsCreated();
    for (int i = 0; i < n; i++) {
      ByteString t = tokens.sign("s1", "q", i, 1, "p", "r");
      assertThat(tokens.verify("s1", "q", i, 1, "p", "r", t)).isTrue();
      assertThat(tokens.verify("s1", "q", i, 2, "p", "r", t)).isFalse();
    }
    assertThat(DeliveryTokens.macsCreated() - before).isLessThanOrEqualTo(1);
  }
}
