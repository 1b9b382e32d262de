package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.manager.SluiceServer;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.ExtendResult;
import dev.sluice.proto.v1.ExtendStatus;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Deadline extension over the receiver protocol, against a real manager and table: an extension is
 * a compare-and-set written to the row (so whoever leads next honours it), a stale attempt's
 * changes nothing, max_hold bounds the hold from the fire, and a manager that does not lead the
 * shard applies it too.
 */
class ExtendTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(ExtendTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static long insert(String queue) throws Exception {
    h.exec("INSERT INTO " + queue + " (order_id) VALUES (1)");
    return h.queryLong("SELECT MAX(id) FROM " + queue);
  }

  static long timeNext(String queue, long id) throws Exception {
    return h.queryLong("SELECT time_next FROM " + queue + " WHERE id = ?", id);
  }

  /** The event's {@code time_deadline_ns} as {@code GET /api/queues/Q/events/ID} gives it. */
  static long adminDeadline(String queue, long id) throws Exception {
    java.net.http.HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create(
                            h.httpBase() + "/api/queues/" + queue + "/events/" + id))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree(r.body())
        .get("time_deadline_ns")
        .asLong();
  }

  @Test
  void anExtendedEventIsNotDeliveredAgainPastItsAckWait() throws Exception {
    h.createServedQueue("ext_ok", "ack_wait=4s min_backoff=10ms max_backoff=20ms");
    RawReceiver r = h.rawReceiver("ext_ok", "holder", 1);
    long id = insert("ext_ok");
    Event e = r.events.poll(30, SECONDS);
    assertThat(e).isNotNull();
    // A second receiver with free credits: the event would go to it if it came back.
    RawReceiver other = h.rawReceiver("ext_ok", "other", 10);
    assertThat(e.getTimeDeadlineNs() - e.getTimeFiredNs())
        .as("the delivery tells its deadline: fire + ack_wait (set once the rows are locked)")
        .isBetween(4_000_000_000L, 5_000_000_000L);

    r.extend(e, 20_000);
    ExtendResult x = r.extendResults.poll(10, SECONDS);
    assertThat(x).isNotNull();
    assertThat(x.getStatus()).isEqualTo(ExtendStatus.EXTEND_STATUS_OK);
    assertThat(timeNext("ext_ok", id))
        .as("the row holds the new deadline")
        .isEqualTo(x.getTimeDeadlineNs());
    assertThat(x.getTimeDeadlineNs()).isGreaterThan(e.getTimeDeadlineNs() + 10_000_000_000L);
    assertThat(adminDeadline("ext_ok", id))
        .as("the admin API shows the extended deadline")
        .isEqualTo(x.getTimeDeadlineNs());
    assertThat(
            h.registry
                .get("sluice.events.extended")
                .tags("queue", "ext_ok", "outcome", "ok")
                .counter()
                .count())
        .isEqualTo(1.0);

    // Past its ack_wait, nobody got it again and the row is still fired at the same epoch.
    long waitMs =
        (e.getTimeDeadlineNs() - h.queryLong("SELECT " + dev.sluice.db.QueueConvention.NOW_NS_SQL))
                / 1_000_000
            + 1500;
    assertThat(
            other.events.poll(Math.max(1500, waitMs), java.util.concurrent.TimeUnit.MILLISECONDS))
        .isNull();
    assertThat(r.events).isEmpty();
    assertThat(h.queryLong("SELECT state FROM ext_ok WHERE id = ?", id)).isEqualTo(1);
    assertThat(h.queryLong("SELECT epoch FROM ext_ok WHERE id = ?", id)).isEqualTo(e.getEpoch());

    r.ack(e);
    org.awaitility.Awaitility.await()
        .atMost(10, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM ext_ok WHERE id = ?", id) == 2);
    assertThat(r.results).anyMatch(a -> a.getStatus() == AckStatus.ACK_STATUS_OK);
  }

  @Test
  void aStaleAttemptsExtensionChangesNothing() throws Exception {
    h.createServedQueue("ext_stale", "ack_wait=30s min_backoff=10ms max_backoff=20ms");
    RawReceiver r = h.rawReceiver("ext_stale", "holder", 1);
    long id = insert("ext_stale");
    Event e = r.events.poll(30, SECONDS);
    assertThat(e).isNotNull();
    long before = timeNext("ext_stale", id);

    r.extend(e, e.getEpoch() - 1, 60_000);
    ExtendResult x = r.extendResults.poll(10, SECONDS);
    assertThat(x.getStatus()).isEqualTo(ExtendStatus.EXTEND_STATUS_STALE);
    assertThat(timeNext("ext_stale", id)).isEqualTo(before);

    // An extension of an event already acked is stale too.
    r.ack(e);
    org.awaitility.Awaitility.await()
        .atMost(10, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM ext_stale WHERE id = ?", id) == 2);
    long acked = timeNext("ext_stale", id);
    r.extend(e, 60_000);
    assertThat(r.extendResults.poll(10, SECONDS).getStatus())
        .isEqualTo(ExtendStatus.EXTEND_STATUS_STALE);
    assertThat(timeNext("ext_stale", id)).isEqualTo(acked);
  }

  @Test
  void maxHoldBoundsTheHoldFromTheFire() throws Exception {
    h.createServedQueue("ext_limit", "ack_wait=5s max_hold=8s");
    RawReceiver r = h.rawReceiver("ext_limit", "holder", 1);
    long id = insert("ext_limit");
    Event e = r.events.poll(30, SECONDS);
    assertThat(e).isNotNull();

    r.extend(e, 60_000);
    ExtendResult x = r.extendResults.poll(10, SECONDS);
    assertThat(x.getStatus()).isEqualTo(ExtendStatus.EXTEND_STATUS_LIMIT);
    assertThat(x.getTimeDeadlineNs()).isEqualTo(e.getTimeFiredNs() + 8_000_000_000L);
    assertThat(timeNext("ext_limit", id)).isEqualTo(x.getTimeDeadlineNs());
  }

  @Test
  void aManagerThatDoesNotLeadTheShardWritesTheExtensionToTheRow() throws Exception {
    h.createServedQueue("ext_direct", "ack_wait=30s");
    RawReceiver r = h.rawReceiver("ext_direct", "holder", 1);
    long id = insert("ext_direct");
    Event e = r.events.poll(30, SECONDS);
    assertThat(e).isNotNull();

    SluiceServer other =
        new SluiceServer(
                h.configBuilder().managerId("not-leader").build(),
                Clock.systemUTC(),
                new SimpleMeterRegistry())
            .start();
    ManagedChannel ch =
        NettyChannelBuilder.forTarget("127.0.0.1:" + other.port()).usePlaintext().build();
    try (RawReceiver viaOther =
        RawReceiver.open(SluiceGrpc.newStub(ch), "ext_direct", "holder-2", 1)) {
      org.awaitility.Awaitility.await().atMost(10, SECONDS).until(() -> viaOther.subscribed);
      viaOther.extend(e, 120_000);
      ExtendResult x = viaOther.extendResults.poll(10, SECONDS);
      assertThat(x).isNotNull();
      assertThat(x.getStatus()).isEqualTo(ExtendStatus.EXTEND_STATUS_OK);
      assertThat(timeNext("ext_direct", id)).isEqualTo(x.getTimeDeadlineNs());
    } finally {
      ch.shutdownNow();
      other.stop();
    }
  }

  /**
   * The SDK extends a long handler's event by itself: a handler running three times ack_wait is
   * delivered once; with automatic extension off, the same event is delivered again while it runs.
   */
  @Test
  void theSdkExtendsARunningHandlerAndWithoutItTheEventComesBackWhileItRuns() throws Exception {
    assertThat(deliveriesOfOneLongHandling("ext_sdk_on", true)).isEqualTo(1);
    assertThat(deliveriesOfOneLongHandling("ext_sdk_off", false)).isGreaterThan(1);
  }

  /** Deliveries of one event whose first handling runs 3 × ack_wait (2 s), the rest at once. */
  private static int deliveriesOfOneLongHandling(String queue, boolean autoExtend)
      throws Exception {
    h.createServedQueue(queue, "ack_wait=2s min_backoff=10ms max_backoff=20ms max_attempts=10");
    java.util.concurrent.atomic.AtomicInteger deliveries =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicReference<java.time.Instant> extendedTo =
        new java.util.concurrent.atomic.AtomicReference<>();
    try (dev.sluice.receiver.SluiceReceiver r =
        dev.sluice.receiver.SluiceReceiver.builder()
            .target(h.target())
            .queue(queue)
            .receiverId(queue + "-r")
            .concurrency(4)
            .autoExtend(autoExtend)
            .handler(
                ev -> {
                  if (deliveries.incrementAndGet() == 1) {
                    java.time.Instant first = ev.deadline();
                    Thread.sleep(6_000);
                    if (ev.deadline().isAfter(first)) {
                      extendedTo.set(ev.deadline());
                    }
                  }
                })
            .build()
            .start()) {
      assertThat(r.awaitSubscribed(java.time.Duration.ofSeconds(30))).isTrue();
      long id = insert(queue);
      org.awaitility.Awaitility.await()
          .atMost(60, SECONDS)
          .until(() -> h.queryLong("SELECT state FROM " + queue + " WHERE id = ?", id) == 2);
    }
    if (autoExtend) {
      assertThat(extendedTo.get()).as("the handler saw its deadline move").isNotNull();
    }
    return deliveries.get();
  }
}
