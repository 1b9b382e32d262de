package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.CancelStatus;
import dev.sluice.proto.v1.Event;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each transition of an event's life (the README's "How it works"), through real gRPC and a real
 * database.
 */
class EventLifeTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(EventLifeTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static long insert(String queue, long orderId) throws Exception {
    try (Connection c = h.connect()) {
      return EventProducer.insert(c, queue, Map.of("order_id", orderId));
    }
  }

  static String state(String queue, long id) throws Exception {
    return switch ((int) h.queryLong("SELECT state FROM " + queue + " WHERE id = ?", id)) {
      case 0 -> "pending";
      case 1 -> "fired";
      case 2 -> "acked";
      case 3 -> "dead";
      case 4 -> "cancelled";
      default -> "?";
    };
  }

  static Event next(RawReceiver r, long seconds) throws InterruptedException {
    return r.events.poll(seconds, TimeUnit.SECONDS);
  }

  @Test
  void pendingFiresThenAckMakesItAcked() throws Exception {
    h.createServedQueue("life_ack", "ack_wait=30s");
    RawReceiver r = h.rawReceiver("life_ack", "r1", 10);
    long id = insert("life_ack", 42);
    Event e = next(r, 10);
    assertThat(e).isNotNull();
    assertThat(e.getId()).isEqualTo(id);
    assertThat(e.getEpoch()).isEqualTo(1);
    assertThat(e.getColumnsMap().get("order_id").getIntValue()).isEqualTo(42);
    assertThat(state("life_ack", id)).isEqualTo("fired");
    r.ack(e);
    await().atMost(5, SECONDS).until(() -> state("life_ack", id).equals("acked"));
    await().atMost(5, SECONDS).until(() -> r.results.size() == 1);
    assertThat(r.results.get(0).getStatus()).isEqualTo(AckStatus.ACK_STATUS_OK);
    assertThat(h.queryLong("SELECT time_acked FROM life_ack WHERE id = ?", id)).isPositive();
    assertThat(next(r, 1)).as("an acked event never fires again").isNull();
  }

  @Test
  void staleOrUnknownAckIsAnsweredAndChangesNothing() throws Exception {
    h.createServedQueue("life_stale", "ack_wait=30s");
    RawReceiver r = h.rawReceiver("life_stale", "r1", 10);
    long id = insert("life_stale", 1);
    Event e = next(r, 10);
    r.ack(id, e.getEpoch() + 5); // wrong epoch
    r.ack(999_999, 1); // no such event
    await().atMost(5, SECONDS).until(() -> r.results.size() == 2);
    assertThat(r.results)
        .extracting(x -> x.getStatus())
        .containsExactlyInAnyOrder(AckStatus.ACK_STATUS_STALE, AckStatus.ACK_STATUS_UNKNOWN);
    assertThat(state("life_stale", id)).isEqualTo("fired");
    assertThat(h.queryLong("SELECT epoch FROM life_stale WHERE id = ?", id)).isEqualTo(1);
    r.ack(e);
    await().atMost(5, SECONDS).until(() -> state("life_stale", id).equals("acked"));
  }

  @Test
  void nackReturnsToPendingAndRetriesWithNextEpoch() throws Exception {
    h.createServedQueue("life_nack", "ack_wait=30s min_backoff=100ms max_backoff=200ms");
    RawReceiver r = h.rawReceiver("life_nack", "r1", 10);
    long id = insert("life_nack", 1);
    Event first = next(r, 10);
    r.nack(first, 0);
    Event second = next(r, 10);
    assertThat(second.getId()).isEqualTo(id);
    assertThat(second.getEpoch()).isEqualTo(2);
    assertThat(second.getTimeFiredNs() - first.getTimeFiredNs())
        .as("waited at least min_backoff")
        .isGreaterThanOrEqualTo(Duration.ofMillis(100).toNanos());
    r.ack(first); // stale now
    r.ack(second);
    await().atMost(5, SECONDS).until(() -> state("life_nack", id).equals("acked"));
    assertThat(r.results).extracting(x -> x.getStatus()).contains(AckStatus.ACK_STATUS_STALE);
  }

  @Test
  void nackWithRetryAfterWaitsThatLong() throws Exception {
    h.createServedQueue("life_retry_after", "ack_wait=30s min_backoff=10ms max_backoff=20ms");
    RawReceiver r = h.rawReceiver("life_retry_after", "r1", 10);
    insert("life_retry_after", 1);
    Event first = next(r, 10);
    r.nack(first, 700);
    Event second = next(r, 10);
    assertThat(second.getTimeFiredNs() - first.getTimeFiredNs())
        .isGreaterThanOrEqualTo(Duration.ofMillis(700).toNanos());
    r.ack(second);
  }

  @Test
  void unackedEventComesBackAfterAckWaitWithinBackoffBounds() throws Exception {
    h.createServedQueue("life_timeout", "ack_wait=1s min_backoff=200ms max_backoff=400ms");
    RawReceiver r = h.rawReceiver("life_timeout", "r1", 10);
    long id = insert("life_timeout", 1);
    Event first = next(r, 10);
    Event again = next(r, 10); // never acked the first
    assertThat(again.getId()).isEqualTo(id);
    assertThat(again.getEpoch()).isEqualTo(2);
    long gap = again.getTimeFiredNs() - first.getTimeFiredNs();
    assertThat(gap).isGreaterThanOrEqualTo(Duration.ofMillis(1200).toNanos());
    // Loose upper bound: ack_wait + max_backoff + scheduling slack, not a speed assertion.
    assertThat(gap).isLessThan(Duration.ofMillis(1400 + 2000).toNanos());
    r.ack(again);
    await().atMost(5, SECONDS).until(() -> state("life_timeout", id).equals("acked"));
  }

  @Test
  void maxAttemptsLeadsToDead() throws Exception {
    h.createServedQueue(
        "life_dead", "ack_wait=30s min_backoff=10ms max_backoff=20ms max_attempts=3");
    RawReceiver r = h.rawReceiver("life_dead", "r1", 10);
    long id = insert("life_dead", 1);
    for (int attempt = 1; attempt <= 3; attempt++) {
      Event e = next(r, 10);
      assertThat(e.getEpoch()).isEqualTo(attempt);
      r.nack(e, 0);
    }
    await().atMost(5, SECONDS).until(() -> state("life_dead", id).equals("dead"));
    assertThat(next(r, 1)).as("a dead event does not fire").isNull();
    assertThat(r.results).extracting(x -> x.getOutcome()).contains("DEAD");
  }

  /** Each delivery of event {@code id}, nacked, until it is dead: whether it said it was last. */
  static List<Boolean> nackUntilDead(RawReceiver r, String queue, long id) throws Exception {
    List<Boolean> last = new java.util.ArrayList<>();
    while (!state(queue, id).equals("dead")) {
      Event e = next(r, 10);
      assertThat(e).as("delivery %s of event %s", last.size() + 1, id).isNotNull();
      assertThat(e.getEpoch()).isEqualTo(last.size() + 1);
      last.add(e.getLastAttempt());
      r.nack(e, 0);
      if (e.getLastAttempt()) {
        await().atMost(5, SECONDS).until(() -> state(queue, id).equals("dead"));
      }
    }
    return last;
  }

  @Test
  void theDeliveryWhoseFailureMakesTheEventDeadSaysItIsTheLast() throws Exception {
    h.createServedQueue(
        "life_last", "ack_wait=30s min_backoff=10ms max_backoff=20ms max_attempts=3");
    RawReceiver r = h.rawReceiver("life_last", "r1", 10);
    long first = insert("life_last", 1);
    assertThat(nackUntilDead(r, "life_last", first)).containsExactly(false, false, true);

    // max_attempts changes in place: later fires are marked by the new value.
    h.exec(
        "ALTER TABLE life_last COMMENT = 'sluice_queue ack_wait=30s min_backoff=10ms"
            + " max_backoff=20ms max_attempts=2'");
    await()
        .atMost(10, SECONDS)
        .until(
            () ->
                h.server().engine().find("life_last").orElseThrow().table().options().maxAttempts()
                    == 2);
    long second = insert("life_last", 2);
    assertThat(nackUntilDead(r, "life_last", second)).containsExactly(false, true);
    assertThat(next(r, 1)).as("a dead event does not fire").isNull();
  }

  @Test
  void rolledBackInsertNeverFires() throws Exception {
    h.createServedQueue("life_rollback", "");
    RawReceiver r = h.rawReceiver("life_rollback", "r1", 10);
    try (Connection c = h.connect()) {
      c.setAutoCommit(false);
      EventProducer.insert(c, "life_rollback", Map.of("order_id", 7L));
      c.rollback();
    }
    long committed = insert("life_rollback", 8);
    Event e = next(r, 10);
    assertThat(e.getId()).isEqualTo(committed);
    assertThat(e.getColumnsMap().get("order_id").getIntValue()).isEqualTo(8);
    r.ack(e);
    assertThat(next(r, 1)).isNull();
  }

  @Test
  void uncommittedInsertFiresOnlyAfterCommit() throws Exception {
    h.createServedQueue("life_commit", "");
    RawReceiver r = h.rawReceiver("life_commit", "r1", 10);
    try (Connection c = h.connect()) {
      c.setAutoCommit(false);
      long id = EventProducer.insert(c, "life_commit", Map.of("order_id", 1L));
      assertThat(next(r, 1)).as("nothing fires before commit").isNull();
      c.commit();
      Event e = next(r, 10);
      assertThat(e.getId()).isEqualTo(id);
      r.ack(e);
    }
  }

  @Test
  void futureEventNeverFiresEarly() throws Exception {
    h.createServedQueue("life_future", "poll_interval=50ms");
    RawReceiver r = h.rawReceiver("life_future", "r1", 10);
    long id;
    try (Connection c = h.connect()) {
      id =
          EventProducer.insert(
              c,
              "life_future",
              Map.of("order_id", 1L),
              EventOptions.builder().delay(Duration.ofMillis(1500)).build());
    }
    long due = h.queryLong("SELECT time_next FROM life_future WHERE id = ?", id);
    Event e = next(r, 10);
    assertThat(e.getId()).isEqualTo(id);
    assertThat(e.getTimeDueNs()).isEqualTo(due);
    assertThat(e.getTimeFiredNs()).isGreaterThanOrEqualTo(due);
    assertThat(h.queryLong("SELECT " + dev.sluice.db.QueueConvention.NOW_NS_SQL))
        .isGreaterThanOrEqualTo(due);
    r.ack(e);
  }

  @Test
  void cancelledEventNeverFires() throws Exception {
    h.createServedQueue("life_cancel", "");
    long viaRpc;
    long viaSql;
    try (Connection c = h.connect()) {
      EventOptions later = EventOptions.builder().delay(Duration.ofSeconds(2)).build();
      viaRpc = EventProducer.insert(c, "life_cancel", Map.of("order_id", 1L), later);
      viaSql = EventProducer.insert(c, "life_cancel", Map.of("order_id", 2L), later);
    }
    RawReceiver r = h.rawReceiver("life_cancel", "r1", 10);
    var resp =
        h.blocking()
            .cancel(
                CancelRequest.newBuilder()
                    .setQueue("life_cancel")
                    .addIds(viaRpc)
                    .addIds(123_456_789L)
                    .build());
    assertThat(resp.getResultsList())
        .extracting(x -> x.getStatus())
        .containsExactly(CancelStatus.CANCEL_STATUS_CANCELLED, CancelStatus.CANCEL_STATUS_UNKNOWN);
    h.exec("UPDATE life_cancel SET state = 4 WHERE id = " + viaSql + " AND state = 0");
    long control = insert("life_cancel", 3);
    Event e = next(r, 10);
    assertThat(e.getId()).isEqualTo(control);
    r.ack(e);
    assertThat(next(r, 3)).as("cancelled events never fire").isNull();
    assertThat(state("life_cancel", viaRpc)).isEqualTo("cancelled");
    assertThat(state("life_cancel", viaSql)).isEqualTo("cancelled");
  }

  @Test
  void brokenStreamReleasesItsEventsToAnotherReceiverAtOnce() throws Exception {
    h.createServedQueue("life_broken", "ack_wait=60s min_backoff=100ms max_backoff=200ms");
    RawReceiver a = h.rawReceiver("life_broken", "a", 5);
    await().atMost(5, SECONDS).until(() -> a.subscribed);
    for (int i = 0; i < 5; i++) {
      insert("life_broken", i);
    }
    await().atMost(10, SECONDS).until(() -> a.all.size() == 5);
    RawReceiver b = h.rawReceiver("life_broken", "b", 10);
    await().atMost(5, SECONDS).until(() -> b.subscribed);
    long t0 = System.nanoTime();
    a.breakStream();
    await().atMost(10, SECONDS).until(() -> b.all.size() == 5);
    assertThat(Duration.ofNanos(System.nanoTime() - t0))
        .as("well before ack_wait (60s)")
        .isLessThan(Duration.ofSeconds(30));
    assertThat(b.all).extracting(Event::getEpoch).containsOnly(2L);
    b.all.forEach(b::ack);
    await()
        .atMost(5, SECONDS)
        .until(() -> h.queryLong("SELECT COUNT(*) FROM life_broken WHERE state = 2") == 5);
  }

  @Test
  void aReceiverGoneWhileItsEventsWereBeingFiredGetsThemReleasedAtOnce() throws Exception {
    h.createServedQueue("life_firing", "ack_wait=60s min_backoff=30s max_backoff=60s");
    insert("life_firing", 1);
    insert("life_firing", 2);
    insert("life_firing", 3);
    await()
        .atMost(10, SECONDS)
        .until(() -> h.server().engine().find("life_firing").get().live().cached() == 3);
    try (Connection lock = h.connect()) {
      // Hold the table's lock so that the fire waits in the database (a row lock would not do:
      // the fire skips locked rows instead of waiting for them).
      try (var st = lock.createStatement()) {
        st.execute("LOCK TABLES life_firing WRITE");
      }
      RawReceiver a = h.rawReceiver("life_firing", "a", 5);
      await()
          .atMost(10, SECONDS)
          .until(
              () ->
                  h.queryLong(
                          "SELECT COUNT(*) FROM information_schema.PROCESSLIST"
                              + " WHERE STATE LIKE 'Waiting for table%lock'"
                              + " AND INFO LIKE '%life_firing%FOR UPDATE%'")
                      > 0);
      a.breakStream();
      // The manager has seen the break while the fire still waits.
      await()
          .atMost(5, SECONDS)
          .until(() -> h.server().engine().find("life_firing").get().live().receivers() == 0);
      RawReceiver b = h.rawReceiver("life_firing", "b", 5);
      await().atMost(5, SECONDS).until(() -> b.subscribed);
      try (var st = lock.createStatement()) {
        st.execute("UNLOCK TABLES");
      }
      // Never sent, so released without backoff (min_backoff=30s), long before ack_wait (60s),
      // and with no attempt spent: the fire was undone, b gets the first attempt.
      await().atMost(20, SECONDS).until(() -> b.all.size() == 3);
      assertThat(a.all).isEmpty();
      assertThat(b.all).extracting(Event::getEpoch).containsOnly(1L);
      b.all.forEach(b::ack);
      await()
          .atMost(5, SECONDS)
          .until(() -> h.queryLong("SELECT COUNT(*) FROM life_firing WHERE state = 2") == 3);
    }
  }

  @Test
  void maxQpsSpacesTheFiresAtTheQueuesRate() throws Exception {
    h.createServedQueue("life_qps", "max_qps=20");
    StringBuilder values = new StringBuilder();
    for (int i = 0; i < 42; i++) {
      values.append(i == 0 ? "(" : ",(").append(i).append(")");
    }
    h.exec("INSERT INTO life_qps (order_id) VALUES " + values);
    RawReceiver r = h.rawReceiver("life_qps", "r1", 100);
    List<Long> fired = new java.util.ArrayList<>();
    for (int i = 0; i < 42; i++) {
      Event e = next(r, 10);
      assertThat(e).as("event %d", i).isNotNull();
      fired.add(e.getTimeFiredNs());
      r.ack(e);
    }
    fired.sort(null);
    // At 20/s in bursts of 2 (a tenth of a second), 42 events span at least 40 intervals of 50 ms
    // from the first fire to the last, however fast the receiver takes them (5 ms of slack for
    // the clock's corrections).
    assertThat(fired.get(41) - fired.get(0))
        .as("ns from the first fire to the 42nd")
        .isGreaterThanOrEqualTo(40 * 50_000_000L - 5_000_000L);
  }
}
