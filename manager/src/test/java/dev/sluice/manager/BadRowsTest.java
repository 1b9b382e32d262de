package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.db.QueueConvention;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Event;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Rows an application or an operator left in a shape Sluice does not expect: each is skipped and
 * counted, or made dead with its reason, and never stops more than itself.
 */
class BadRowsTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(BadRowsTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static void queue(String name, String options) throws Exception {
    h.createQueue(name, options);
    served(name);
  }

  static void served(String name) {
    await().atMost(10, SECONDS).until(() -> h.server().engine().find(name).isPresent());
  }

  static Event next(RawReceiver r, long seconds) throws InterruptedException {
    return r.events.poll(seconds, TimeUnit.SECONDS);
  }

  static long insert(String queue, long orderId) throws Exception {
    h.exec("INSERT INTO " + queue + " (order_id) VALUES (" + orderId + ")");
    return h.queryLong("SELECT MAX(id) FROM " + queue);
  }

  static double counter(String name, String queue, String... tags) {
    var search = h.registry.find(name).tag("queue", queue);
    for (int i = 0; i + 1 < tags.length; i += 2) {
      search = search.tag(tags[i], tags[i + 1]);
    }
    var c = search.counter();
    return c == null ? 0 : c.count();
  }

  /** Finding 1: a row set to an unknown state while in flight never blocks other acks. */
  @Test
  void aRowWithAnUnknownStateNeverBlocksTheAcksBehindIt() throws Exception {
    queue("bad_state", "ack_wait=30s");
    RawReceiver r = h.rawReceiver("bad_state", "r1", 10);
    insert("bad_state", 1);
    insert("bad_state", 2);
    Event a = next(r, 10);
    Event b = next(r, 10);
    assertThat(b).isNotNull();
    h.exec("UPDATE bad_state SET state = 9 WHERE id = " + a.getId());
    r.ack(a);
    r.ack(b);
    await()
        .atMost(10, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM bad_state WHERE id = " + b.getId()) == 2);
    await().atMost(5, SECONDS).until(() -> r.results.size() == 2);
    assertThat(r.results)
        .filteredOn(x -> x.getEvent().getId() == a.getId())
        .extracting(x -> x.getStatus())
        .containsExactly(AckStatus.ACK_STATUS_STALE);
    // The queue goes on: a new event is delivered and acked.
    long c = insert("bad_state", 3);
    Event e = next(r, 10);
    assertThat(e.getId()).isEqualTo(c);
    r.ack(e);
    await()
        .atMost(10, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM bad_state WHERE id = " + c) == 2);
    assertThat(h.queryLong("SELECT state FROM bad_state WHERE id = " + a.getId())).isEqualTo(9);
    assertThat(counter("sluice.bad.rows", "bad_state", "reason", "unknown_state")).isPositive();
    // The status page's counts see it as "other", and keep counting the rest.
    var counts = h.server().engine().find("bad_state").orElseThrow().counts();
    assertThat(counts.acked()).isEqualTo(2);
    assertThat(counts.other()).isEqualTo(1);
  }

  /** Finding 14: a nack's huge retry_after is clamped, never wrapped to an immediate retry. */
  @Test
  void aHugeRetryAfterIsClampedNotWrapped() throws Exception {
    queue("huge_retry", "ack_wait=30s min_backoff=10ms max_backoff=20ms");
    RawReceiver r = h.rawReceiver("huge_retry", "r1", 10);
    long id = insert("huge_retry", 1);
    Event e = next(r, 10);
    r.nack(e, Long.MAX_VALUE);
    await()
        .atMost(10, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM huge_retry WHERE id = " + id) == 0);
    long now = h.queryLong("SELECT " + QueueConvention.NOW_NS_SQL);
    long next = h.queryLong("SELECT time_next FROM huge_retry WHERE id = " + id);
    assertThat(next - now).as("retried no sooner than a day").isGreaterThan(23 * 3600_000_000_000L);
    assertThat(next(r, 2)).as("not redelivered at once").isNull();
  }

  /** Finding 14: BIGINT UNSIGNED values above 2^63 arrive exactly (as an unsigned 64-bit value). */
  @Test
  void unsignedValuesAbove2To63ArriveExactly() throws Exception {
    h.exec(
        QueueConvention.createTableSql(
            "unsigned_q", List.of("`big` BIGINT UNSIGNED NULL"), "sluice_queue"));
    served("unsigned_q");
    RawReceiver r = h.rawReceiver("unsigned_q", "r1", 10);
    h.exec("INSERT INTO unsigned_q (big) VALUES (18446744073709551615), (5)");
    Event a = next(r, 10);
    Event b = next(r, 10);
    assertThat(b).isNotNull();
    Event max = a.getColumnsMap().get("big").getUintValue() == -1L ? a : b;
    Event five = max == a ? b : a;
    assertThat(Long.toUnsignedString(max.getColumnsMap().get("big").getUintValue()))
        .isEqualTo("18446744073709551615");
    assertThat(five.getColumnsMap().get("big").getUintValue()).isEqualTo(5);
    r.ack(a);
    r.ack(b);
  }

  /** Finding 3: a row at the epoch column's maximum is made dead; the rest of its group fires. */
  @Test
  void anEpochAtTheColumnMaximumIsMadeDeadAndTheRestFires() throws Exception {
    queue("max_epoch", "ack_wait=30s");
    h.exec("INSERT INTO max_epoch (order_id, epoch) VALUES (1, 0), (2, 2147483647), (3, 5)");
    RawReceiver r = h.rawReceiver("max_epoch", "r1", 10);
    Event a = next(r, 10);
    Event b = next(r, 10);
    assertThat(a).isNotNull();
    assertThat(b).as("both good rows are sent").isNotNull();
    assertThat(
            List.of(
                a.getColumnsMap().get("order_id").getIntValue(),
                b.getColumnsMap().get("order_id").getIntValue()))
        .containsExactlyInAnyOrder(1L, 3L);
    long bad = h.queryLong("SELECT id FROM max_epoch WHERE order_id = 2");
    await()
        .atMost(10, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM max_epoch WHERE id = " + bad) == 3);
    assertThat(
            h.queryLong(
                "SELECT COUNT(*) FROM sluice_dead_reason WHERE queue = 'max_epoch' AND id = "
                    + bad
                    + " AND reason LIKE 'epoch at the column maximum%'"))
        .isEqualTo(1);
    assertThat(counter("sluice.bad.rows", "max_epoch", "reason", "epoch_at_max")).isPositive();
    r.ack(a);
    r.ack(b);
    assertThat(next(r, 1)).isNull();
  }

  /**
   * Finding 7: a pending row rescheduled while in the window fires at its new time, as it is now.
   */
  @Test
  void aRescheduledRowFiresAtItsNewTimeWithItsNewColumns() throws Exception {
    queue("resched", "ack_wait=30s poll_interval=1s");
    RawReceiver r = h.rawReceiver("resched", "r1", 10);
    await().atMost(5, SECONDS).until(() -> r.subscribed);
    h.exec(
        "INSERT INTO resched (order_id, payload, time_next) VALUES (1, 'old', "
            + QueueConvention.NOW_NS_SQL
            + " + 1500000000)");
    long id = h.queryLong("SELECT MAX(id) FROM resched");
    await()
        .atMost(5, SECONDS)
        .until(() -> h.server().engine().find("resched").get().live().cached() == 1);
    h.exec(
        "UPDATE resched SET time_next = time_next + 3000000000, payload = 'new'"
            + " WHERE id = "
            + id
            + " AND state = 0");
    long due = h.queryLong("SELECT time_next FROM resched WHERE id = " + id);
    Event e = next(r, 15);
    assertThat(e).isNotNull();
    assertThat(e.getTimeFiredNs()).as("not before its new time").isGreaterThanOrEqualTo(due);
    assertThat(e.getColumnsMap().get("payload").getStringValue()).isEqualTo("new");
    assertThat(e.getTimeDueNs()).isEqualTo(due);
    r.ack(e);
  }

  /** Finding 12: an application's lock on one pending row never holds up the others' fire. */
  @Test
  void aLockedRowNeverDelaysTheOthersAndFiresOnceFree() throws Exception {
    queue("locked_q", "ack_wait=30s");
    h.exec("INSERT INTO locked_q (order_id) VALUES (1), (2), (3)");
    long locked = h.queryLong("SELECT id FROM locked_q WHERE order_id = 2");
    try (java.sql.Connection app = h.connect()) {
      app.setAutoCommit(false);
      try (var st = app.createStatement()) {
        st.executeQuery("SELECT id FROM locked_q WHERE id = " + locked + " FOR UPDATE").close();
      }
      RawReceiver r = h.rawReceiver("locked_q", "r1", 10);
      Event a = next(r, 10);
      Event b = next(r, 10);
      assertThat(b).as("both unlocked rows are sent while the lock is held").isNotNull();
      assertThat(List.of(a.getId(), b.getId())).doesNotContain(locked);
      r.ack(a);
      r.ack(b);
      app.rollback();
      Event c = next(r, 10);
      assertThat(c).as("the locked row fires once free").isNotNull();
      assertThat(c.getId()).isEqualTo(locked);
      assertThat(c.getEpoch()).as("no attempt lost").isEqualTo(1);
      r.ack(c);
    }
  }

  /**
   * Finding 2: a row whose column Connector/J refuses to read as its type (a zero DATETIME, which
   * MariaDB and MySQL store under a lax sql_mode) made every poll of the queue fail. Columns are
   * now read by their kind, dates as the server's text when java.time cannot hold them, so such a
   * row is delivered with its value exactly as stored, and so is the rest of the queue. (Should a
   * value still fail to decode, the poll reads row by row and makes only that row dead, naming the
   * column.)
   */
  @Test
  void aRowTheDriverCannotReadAsItsTypeIsDeliveredAsStoredAndTheRestToo() throws Exception {
    h.exec(
        QueueConvention.createTableSql(
            "unreadable_q", List.of("`n` INT NULL", "`at` DATETIME NULL"), "sluice_queue"));
    served("unreadable_q");
    try (var c = h.connect();
        var st = c.createStatement()) {
      st.execute("SET SESSION sql_mode = ''");
      st.execute(
          "INSERT INTO unreadable_q (n, at) VALUES (1, '2024-01-02 03:04:05'),"
              + " (2, '0000-00-00 00:00:00'), (3, NULL)");
    }
    long zero = h.queryLong("SELECT id FROM unreadable_q WHERE n = 2");
    RawReceiver r = h.rawReceiver("unreadable_q", "r1", 10);
    java.util.Map<Long, Event> got = new java.util.HashMap<>();
    for (int i = 0; i < 3; i++) {
      Event e = next(r, 10);
      assertThat(e).as("all three rows are delivered").isNotNull();
      got.put(e.getId(), e);
      r.ack(e);
    }
    assertThat(got).containsKey(zero);
    assertThat(got.get(zero).getColumnsMap().get("at").toString()).contains("0000-00-00 00:00:00");
    long later = insert2("unreadable_q");
    Event c = next(r, 10);
    assertThat(c.getId()).isEqualTo(later);
    r.ack(c);
  }

  static long insert2(String queue) throws Exception {
    h.exec("INSERT INTO " + queue + " (n) VALUES (4)");
    return h.queryLong("SELECT MAX(id) FROM " + queue);
  }
}
