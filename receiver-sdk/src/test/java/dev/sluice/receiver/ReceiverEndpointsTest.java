package dev.sluice.receiver;

import static dev.sluice.receiver.TestSluiceServer.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sluice.proto.v1.Subscribe;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A receiver given several managers: one stream to each, one flow of events, acks routed back. */
class ReceiverEndpointsTest extends ReceiverTestSupport {

  private SluiceReceiver startOnBoth(
      TestSluiceServer other, EventHandler handler, String receiverId) {
    SluiceReceiver receiver =
        startReceiver(
            handler,
            b ->
                b.targets(List.of(server.target(), other.target()))
                    .receiverId(receiverId)
                    .concurrency(2)
                    .maxInFlight(7));
    await().atMost(WAIT).until(() -> receiver.stats().streamsConnected() == 2);
    return receiver;
  }

  @Test
  void seesEveryManagersEventsAndAcksEachOnTheManagerThatSentIt() throws Exception {
    TestSluiceServer other = extraServer();
    SluiceReceiver receiver = startOnBoth(other, e -> {}, "r-two");

    for (TestSluiceServer s : List.of(server, other)) {
      Subscribe subscribe = s.subscribes.get(0);
      assertThat(subscribe.getReceiverId()).isEqualTo("r-two");
      assertThat(subscribe.getMaxInFlight()).as("credits are per stream").isEqualTo(7);
      assertThat(subscribe.getKeyRange()).isEmpty();
    }

    // Ids are only unique within a shard: the same (id, epoch) from two managers is two events.
    server.push(event(1, 1), event(2, 1), event(3, 1));
    other.push(event(1, 1), event(101, 5));

    await().atMost(WAIT).until(() -> server.acked().size() == 3 && other.acked().size() == 2);
    assertThat(server.ackedIds()).containsExactlyInAnyOrder(1L, 2L, 3L);
    assertThat(other.ackedIds()).containsExactlyInAnyOrder(1L, 101L);
    await().atMost(WAIT).until(() -> receiver.stats().ackOk() == 5);
    ReceiverStats stats = receiver.stats();
    assertThat(stats.received()).isEqualTo(5);
    assertThat(stats.acked()).isEqualTo(5);
    assertThat(stats.inFlight()).isZero();
    assertThat(stats.reconnects()).isZero();
    assertThat(stats.streamsConnected()).isEqualTo(2);
  }

  @Test
  void keepsDeliveringFromOneManagerWhileTheOtherIsDownAndSendsItsAcksThroughTheOther()
      throws Exception {
    TestSluiceServer other = extraServer();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    SluiceReceiver receiver =
        startOnBoth(
            other,
            e -> {
              if (e.id() == 4) {
                started.countDown();
                release.await(30, TimeUnit.SECONDS);
              }
            },
            "r-down");
    server.push(event(4, 2));
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    int port = server.port();
    server.close(); // the manager process goes away (shutdownNow) while event 4 is handled
    await().atMost(WAIT).until(() -> receiver.stats().streamsConnected() == 1);

    other.push(event(10, 1), event(11, 1));
    await().atMost(WAIT).until(() -> other.acked().size() == 2);
    long released = System.nanoTime();
    release.countDown();
    // Event 4's ack is owed to the manager that is down. Every manager applies acks for its
    // shards through the CAS, so after a second it goes through the other one, before the
    // shard's new leader would redeliver the event.
    await().atMost(WAIT).until(() -> other.ackedIds().contains(4L));
    assertThat(Duration.ofNanos(System.nanoTime() - released))
        .isGreaterThanOrEqualTo(AckSender.REROUTE_AFTER.minusMillis(50));
    assertThat(other.acked())
        .filteredOn(r -> r.getId() == 4)
        .singleElement()
        .satisfies(r -> assertThat(r.getEpoch()).isEqualTo(2));
    await().atMost(WAIT).until(() -> receiver.stats().ackOk() == 3);
    other.push(event(12, 1));
    await().atMost(WAIT).until(() -> other.acked().size() == 4);
    assertThat(other.ackedIds()).containsExactlyInAnyOrder(10L, 11L, 4L, 12L);

    TestSluiceServer restarted = extraServer(port);
    await().atMost(WAIT).until(() -> receiver.stats().streamsConnected() == 2);
    assertThat(receiver.stats().reconnects()).isPositive();
    assertThat(other.subscribes).hasSize(1); // the other stream never broke

    restarted.push(event(5, 1));
    await().atMost(WAIT).until(() -> restarted.ackedIds().contains(5L));
    assertThat(restarted.ackedIds()).as("event 4 was answered already").containsExactly(5L);
  }

  @Test
  void anAckWaitsForItsManagerWhenNoOtherIsConnected() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    SluiceReceiver receiver =
        startReceiver(
            e -> {
              started.countDown();
              release.await(30, TimeUnit.SECONDS);
            },
            b -> b.receiverId("r-alone"));
    await().atMost(WAIT).until(() -> receiver.stats().streamsConnected() == 1);
    server.push(event(7, 3));
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    int port = server.port();
    server.close();
    release.countDown();
    // A hold on purpose: the ack must outlive REROUTE_AFTER with no manager to reroute it to. The
    // SDK shows no sign of that (no count of reroute attempts, no clock to tick), so nothing to
    // wait on.
    Thread.sleep(2 * AckSender.REROUTE_AFTER.toMillis());
    TestSluiceServer restarted = extraServer(port);
    await().atMost(WAIT).until(() -> restarted.ackedIds().contains(7L));
    assertThat(restarted.timeline).containsSubsequence("subscribe:r-alone", "ack:7");
  }

  @Test
  void closeNotifiesEveryManagerAndEndsEveryStream() throws Exception {
    TestSluiceServer other = extraServer();
    SluiceReceiver receiver = startOnBoth(other, e -> {}, "r-both");
    server.push(event(1, 1));
    other.push(event(2, 1));
    await().atMost(WAIT).until(() -> receiver.stats().ackOk() == 2);

    receiver.close();

    for (TestSluiceServer s : List.of(server, other)) {
      assertThat(s.notified).containsExactly("r-both");
      assertThat(s.timeline).containsSubsequence("subscribe:r-both", "notify:r-both", "completed");
    }
    assertThat(receiver.stats().streamsConnected()).isZero();
    await()
        .atMost(WAIT)
        .until(
            () ->
                Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(th -> th.getName().startsWith("sluice-receiver-r-both-")));
  }

  @Test
  void closeWithOneManagerDownStillNotifiesTheOther() throws Exception {
    TestSluiceServer other = extraServer();
    SluiceReceiver receiver = startOnBoth(other, e -> {}, "r-half");
    server.close();
    await().atMost(WAIT).until(() -> receiver.stats().streamsConnected() == 1);

    receiver.close();

    assertThat(other.notified).containsExactly("r-half");
    assertThat(other.timeline).containsSubsequence("notify:r-half", "completed");
  }

  @Test
  void retriesAManagerThatDoesNotServeTheQueueYetAndWarnsOncePerKindOfAnswer() throws Exception {
    TestSluiceServer other = extraServer();
    other.refuseSubscribe = Status.NOT_FOUND.withDescription("queue 'q' is not served here");
    Logger connectorLog = (Logger) LoggerFactory.getLogger(Connector.class);
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    connectorLog.addAppender(logs);
    try {
      SluiceReceiver receiver =
          startReceiver(e -> {}, b -> b.targets(List.of(server.target(), other.target())));

      await().atMost(WAIT).until(() -> other.subscribes.size() >= 3);
      assertThat(receiver.stats().streamsConnected()).isEqualTo(1);
      server.push(event(1, 1));
      await().atMost(WAIT).until(() -> server.acked().size() == 1);
      assertThat(warningsAbout(logs, other)).singleElement().asString().contains("NOT_FOUND");

      int before = other.subscribes.size();
      other.refuseSubscribe = Status.FAILED_PRECONDITION.withDescription("bad comment");
      await().atMost(WAIT).until(() -> other.subscribes.size() >= before + 3);
      assertThat(warningsAbout(logs, other)).hasSize(2).last().asString().contains("bad comment");

      other.refuseSubscribe = null; // this manager now leads a shard of the queue
      await().atMost(WAIT).until(() -> receiver.stats().streamsConnected() == 2);
      other.push(event(2, 1));
      await().atMost(WAIT).until(() -> other.ackedIds().contains(2L));
      assertThat(server.ackedIds()).containsExactly(1L);
    } finally {
      connectorLog.detachAppender(logs);
    }
  }

  private static List<String> warningsAbout(
      ListAppender<ILoggingEvent> logs, TestSluiceServer manager) {
    return List.copyOf(logs.list).stream()
        .filter(e -> e.getLevel() == Level.WARN)
        .map(ILoggingEvent::getFormattedMessage)
        .filter(m -> m.contains(" " + manager.target() + " "))
        .toList();
  }

  @Test
  void countsShardChanges() {
    SluiceReceiver receiver = startReceiver(e -> {}, b -> b);
    server.pushShardChange("-80", true);
    server.pushShardChange("80-", false);
    await().atMost(WAIT).until(() -> receiver.stats().shardChanges() == 2);
    // The stream goes on as before.
    server.push(event(1, 1));
    await().atMost(WAIT).until(() -> server.acked().size() == 1);
  }

  @Test
  void sendsTheKeyRangeInSubscribe() {
    startReceiver(e -> {}, b -> b.keyRange("40-c0"));
    assertThat(server.subscribes.get(0).getKeyRange()).isEqualTo("40-c0");
  }

  @Test
  void takesADnsTarget() {
    SluiceReceiver receiver =
        startReceiver(e -> {}, b -> b.target("dns:///127.0.0.1:" + server.port()));
    server.push(event(1, 1));
    await().atMost(WAIT).until(() -> receiver.stats().ackOk() == 1);
    assertThat(receiver.stats().streamsConnected()).isEqualTo(1);
  }
}
