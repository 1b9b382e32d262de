package dev.sluice.core.queue;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.loop.Backoff;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Settled;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.StateCounts;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Rows an application or an operator left in a shape Sluice does not expect: each is skipped and
 * counted, or made dead with its reason, and never stops more than itself.
 */
class BadRowsTest {
  static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.fresh(BadRowsTest.class).managerId("bad-rows-test").start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static void queue(String name, String options) throws Exception {
    h.queue(
        name,
        List.of("`order_id` BIGINT NULL", "`payload` VARCHAR(255) NULL"),
        "sluice_queue " + options);
  }

  static long insert(String queue, long orderId) throws Exception {
    h.db().exec("INSERT INTO " + queue + " (order_id) VALUES (" + orderId + ")");
    return h.queryLong("SELECT MAX(id) FROM " + queue);
  }

  static long state(String queue, long id) throws Exception {
    return h.queryLong("SELECT state FROM " + queue + " WHERE id = ?", id);
  }

  static double counter(String name, String queue, String reason) {
    var c = h.registry().find(name).tag("queue", queue).tag("reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  /** Nothing more reaches {@code out} for a while (it has delivered {@code n} in all). */
  static void nothingMore(CollectingOutlet out, int n) {
    await().during(800, MILLISECONDS).atMost(2, SECONDS).until(() -> out.all.size() == n);
  }

  /** Finding 1: a row set to an unknown state while in flight never blocks other acks. */
  @Test
  void aRowWithAnUnknownStateNeverBlocksTheAcksBehindIt() throws Exception {
    queue("bad_state", "ack_wait=30s");
    CollectingOutlet out = h.subscribe("bad_state", 10);
    insert("bad_state", 1);
    insert("bad_state", 2);
    List<Delivery> two = out.take(2, 10_000);
    assertThat(two).hasSize(2);
    Delivery a = two.get(0);
    Delivery b = two.get(1);
    h.db().exec("UPDATE bad_state SET state = 9 WHERE id = " + a.id());
    h.ack("bad_state", out, a);
    h.ack("bad_state", out, b);
    await().atMost(10, SECONDS).until(() -> state("bad_state", b.id()) == 2);
    await().atMost(5, SECONDS).until(() -> out.settled.size() == 2);
    assertThat(out.settled)
        .filteredOn(x -> x.ref().id() == a.id())
        .extracting(Settled::outcome)
        .containsExactly(CasOutcome.STALE);
    // The queue goes on: a new event is delivered and acked.
    long c = insert("bad_state", 3);
    Delivery e = out.next(10_000);
    assertThat(e.id()).isEqualTo(c);
    h.ack("bad_state", out, e);
    await().atMost(10, SECONDS).until(() -> state("bad_state", c) == 2);
    assertThat(state("bad_state", a.id())).isEqualTo(9);
    assertThat(counter("sluice.bad.rows", "bad_state", "unknown_state")).isPositive();
    // The queue's counts see it as "other", and keep counting the rest.
    StateCounts counts = h.engine().find("bad_state").orElseThrow().counts();
    assertThat(counts.acked()).isEqualTo(2);
    assertThat(counts.other()).isEqualTo(1);
  }

  /**
   * Finding 14: a nack's huge retry-after is clamped, never wrapped to an immediate retry. (The
   * largest retry_after_ms a receiver can send is Long.MAX_VALUE ns once converted.)
   */
  @Test
  void aHugeRetryAfterIsClampedNotWrapped() throws Exception {
    queue("huge_retry", "ack_wait=30s min_backoff=10ms max_backoff=20ms");
    CollectingOutlet out = h.subscribe("huge_retry", 10);
    long id = insert("huge_retry", 1);
    Delivery e = out.next(10_000);
    h.nack("huge_retry", out, e, Backoff.msToNs(Long.MAX_VALUE));
    await().atMost(10, SECONDS).until(() -> state("huge_retry", id) == 0);
    long now = h.queryLong("SELECT " + QueueConvention.NOW_NS_SQL);
    long next = h.queryLong("SELECT time_next FROM huge_retry WHERE id = ?", id);
    assertThat(next - now).as("retried no sooner than a day").isGreaterThan(23 * 3600_000_000_000L);
    nothingMore(out, 1);
  }

  /** Finding 14: BIGINT UNSIGNED values above 2^63 arrive exactly (as an unsigned 64-bit value). */
  @Test
  void unsignedValuesAbove2To63ArriveExactly() throws Exception {
    h.queue("unsigned_q", List.of("`big` BIGINT UNSIGNED NULL"), "sluice_queue");
    CollectingOutlet out = h.subscribe("unsigned_q", 10);
    h.db().exec("INSERT INTO unsigned_q (big) VALUES (18446744073709551615), (5)");
    List<Delivery> two = out.take(2, 10_000);
    assertThat(two)
        .extracting(d -> d.columns().get("big"))
        .containsExactlyInAnyOrder(new BigInteger("18446744073709551615"), BigInteger.valueOf(5));
    two.forEach(d -> h.ack("unsigned_q", out, d));
  }

  /** Finding 3: a row at the epoch column's maximum is made dead; the rest of its group fires. */
  @Test
  void anEpochAtTheColumnMaximumIsMadeDeadAndTheRestFires() throws Exception {
    queue("max_epoch", "ack_wait=30s");
    h.db().exec("INSERT INTO max_epoch (order_id, epoch) VALUES (1, 0), (2, 2147483647), (3, 5)");
    CollectingOutlet out = h.subscribe("max_epoch", 10);
    List<Delivery> two = out.take(2, 10_000);
    assertThat(two).as("both good rows are sent").hasSize(2);
    assertThat(two).extracting(d -> d.columns().get("order_id")).containsExactlyInAnyOrder(1L, 3L);
    long bad = h.queryLong("SELECT id FROM max_epoch WHERE order_id = 2");
    await().atMost(10, SECONDS).until(() -> state("max_epoch", bad) == 3);
    assertThat(
            h.queryLong(
                "SELECT COUNT(*) FROM sluice_dead_reason WHERE queue = 'max_epoch' AND id = ?"
                    + " AND reason LIKE 'epoch at the column maximum%'",
                bad))
        .isEqualTo(1);
    assertThat(counter("sluice.bad.rows", "max_epoch", "epoch_at_max")).isPositive();
    two.forEach(d -> h.ack("max_epoch", out, d));
    nothingMore(out, 2);
  }

  /**
   * Finding 7: a pending row rescheduled while in the window fires at its new time, as it is now.
   */
  @Test
  void aRescheduledRowFiresAtItsNewTimeWithItsNewColumns() throws Exception {
    queue("resched", "ack_wait=30s poll_interval=1s");
    CollectingOutlet out = h.subscribe("resched", 10);
    h.db()
        .exec(
            "INSERT INTO resched (order_id, payload, time_next) VALUES (1, 'old', "
                + QueueConvention.NOW_NS_SQL
                + " + 1500000000)");
    long id = h.queryLong("SELECT MAX(id) FROM resched");
    QueueManager q = h.engine().find("resched").orElseThrow();
    await().atMost(5, SECONDS).until(() -> q.live().cached() == 1);
    h.db()
        .exec(
            "UPDATE resched SET time_next = time_next + 3000000000, payload = 'new'"
                + " WHERE id = "
                + id
                + " AND state = 0");
    long due = h.queryLong("SELECT time_next FROM resched WHERE id = ?", id);
    Delivery e = out.next(15_000);
    assertThat(e).isNotNull();
    assertThat(e.firedNs()).as("not before its new time").isGreaterThanOrEqualTo(due);
    assertThat(e.columns()).containsEntry("payload", "new");
    assertThat(e.dueNs()).isEqualTo(due);
    h.ack("resched", out, e);
  }

  /** Finding 12: an application's lock on one pending row never holds up the others' fire. */
  @Test
  void aLockedRowNeverDelaysTheOthersAndFiresOnceFree() throws Exception {
    queue("locked_q", "ack_wait=30s");
    h.db().exec("INSERT INTO locked_q (order_id) VALUES (1), (2), (3)");
    long locked = h.queryLong("SELECT id FROM locked_q WHERE order_id = 2");
    try (Connection app = h.db().connect()) {
      app.setAutoCommit(false);
      try (Statement st = app.createStatement()) {
        st.executeQuery("SELECT id FROM locked_q WHERE id = " + locked + " FOR UPDATE").close();
      }
      CollectingOutlet out = h.subscribe("locked_q", 10);
      List<Delivery> two = out.take(2, 10_000);
      assertThat(two).as("both unlocked rows are sent while the lock is held").hasSize(2);
      assertThat(two).extracting(Delivery::id).doesNotContain(locked);
      two.forEach(d -> h.ack("locked_q", out, d));
      app.rollback();
      Delivery c = out.next(10_000);
      assertThat(c).as("the locked row fires once free").isNotNull();
      assertThat(c.id()).isEqualTo(locked);
      assertThat(c.epoch()).as("no attempt lost").isEqualTo(1);
      h.ack("locked_q", out, c);
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
    h.queue("unreadable_q", List.of("`n` INT NULL", "`at` DATETIME NULL"), "sluice_queue");
    try (Connection c = h.db().connect();
        Statement st = c.createStatement()) {
      st.execute("SET SESSION sql_mode = ''");
      st.execute(
          "INSERT INTO unreadable_q (n, at) VALUES (1, '2024-01-02 03:04:05'),"
              + " (2, '0000-00-00 00:00:00'), (3, NULL)");
    }
    long zero = h.queryLong("SELECT id FROM unreadable_q WHERE n = 2");
    CollectingOutlet out = h.subscribe("unreadable_q", 10);
    Map<Long, Delivery> got = new HashMap<>();
    for (int i = 0; i < 3; i++) {
      Delivery e = out.next(10_000);
      assertThat(e).as("all three rows are delivered").isNotNull();
      got.put(e.id(), e);
      h.ack("unreadable_q", out, e);
    }
    assertThat(got).containsKey(zero);
    assertThat(String.valueOf(got.get(zero).columns().get("at"))).contains("0000-00-00 00:00:00");
    h.db().exec("INSERT INTO unreadable_q (n) VALUES (4)");
    long later = h.queryLong("SELECT MAX(id) FROM unreadable_q");
    Delivery c = out.next(10_000);
    assertThat(c.id()).isEqualTo(later);
    h.ack("unreadable_q", out, c);
  }
}
