package dev.sluice.core.queue;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.store.CasOutcome;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, item 2: one row whose UPDATE keeps failing (here a trigger that refuses it) is found by
 * splitting the batch it is in, retried on its own and made dead with the database's error; every
 * other ack and fire goes on.
 */
class FailingRowWriteTest {
  static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.fresh(FailingRowWriteTest.class).managerId("failing-write-test").start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static void queue(String name) throws Exception {
    h.queue(
        name,
        List.of("`order_id` BIGINT NULL"),
        "sluice_queue ack_wait=60s min_backoff=100ms max_backoff=400ms");
  }

  static void insert(String queue, int n) throws Exception {
    StringBuilder sql = new StringBuilder("INSERT INTO " + queue + " (order_id) VALUES ");
    for (int i = 0; i < n; i++) {
      sql.append(i == 0 ? "" : ", ").append("(").append(i).append(")");
    }
    h.db().exec(sql.toString());
  }

  static void refuse(String queue, long id, int toState, String message) throws Exception {
    h.db()
        .exec(
            "CREATE TRIGGER "
                + queue
                + "_refuse BEFORE UPDATE ON "
                + queue
                + " FOR EACH ROW BEGIN IF NEW.id = "
                + id
                + " AND NEW.state = "
                + toState
                + " THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '"
                + message
                + "'; END IF; END");
  }

  /** Takes and acks {@code n} events, returning their ids. */
  static Set<Long> takeAndAck(String queue, CollectingOutlet out, int n) throws Exception {
    Set<Long> got = new HashSet<>();
    for (int i = 0; i < n; i++) {
      Delivery d = out.next(15_000);
      assertThat(d).as("event %d of %d received", i + 1, n).isNotNull();
      got.add(d.id());
      h.ack(queue, out, d);
    }
    return got;
  }

  static long acked(String queue) throws Exception {
    return h.queryLong("SELECT COUNT(*) FROM " + queue + " WHERE state = 2");
  }

  @Test
  void aRowThatRefusesItsAckHoldsUpNoOtherAck() throws Exception {
    queue("ack_refused");
    insert("ack_refused", 100);
    long bad = h.queryLong("SELECT MIN(id) + 2 FROM ack_refused");
    refuse("ack_refused", bad, 2, "row 3 refuses its ack");
    CollectingOutlet out = h.subscribe("ack_refused", 100);
    assertThat(takeAndAck("ack_refused", out, 100)).contains(bad);
    await().atMost(30, SECONDS).until(() -> acked("ack_refused") == 99);
    await()
        .atMost(10, SECONDS)
        .until(
            () ->
                out.settled.stream()
                        .filter(x -> x.outcome() == CasOutcome.APPLIED)
                        .filter(x -> x.ref().id() != bad)
                        .count()
                    == 99);
    insert("ack_refused", 50);
    takeAndAck("ack_refused", out, 50);
    await().atMost(30, SECONDS).until(() -> acked("ack_refused") == 149);
    // The refused row, retried on its own, ends dead with the database's error as its reason.
    await()
        .atMost(60, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM ack_refused WHERE id = ?", bad) == 3);
    assertThat(
            h.queryString(
                "SELECT reason FROM sluice_dead_reason WHERE queue = 'ack_refused' AND id = ?",
                bad))
        .contains("row 3 refuses its ack");
  }

  @Test
  void aRowThatRefusesItsFireHoldsUpNoOtherFire() throws Exception {
    queue("fire_refused");
    insert("fire_refused", 20);
    long bad = h.queryLong("SELECT MIN(id) + 2 FROM fire_refused");
    refuse("fire_refused", bad, 1, "row 3 refuses to fire");
    CollectingOutlet out = h.subscribe("fire_refused", 100);
    assertThat(takeAndAck("fire_refused", out, 19)).doesNotContain(bad);
    insert("fire_refused", 10);
    assertThat(takeAndAck("fire_refused", out, 10)).doesNotContain(bad);
    await()
        .atMost(60, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM fire_refused WHERE id = ?", bad) == 3);
    assertThat(
            h.queryString(
                "SELECT reason FROM sluice_dead_reason WHERE queue = 'fire_refused' AND id = ?",
                bad))
        .contains("row 3 refuses to fire");
    await().atMost(30, SECONDS).until(() -> acked("fire_refused") == 29);
  }
}
