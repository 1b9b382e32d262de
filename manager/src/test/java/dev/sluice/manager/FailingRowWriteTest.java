package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Event;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, item 2: one row whose UPDATE keeps failing (here a trigger that refuses it) is found by
 * splitting the batch it is in, retried on its own and made dead with the database's error; every
 * other ack and fire goes on.
 */
class FailingRowWriteTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(FailingRowWriteTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static void insert(String queue, int n) throws Exception {
    StringBuilder sql = new StringBuilder("INSERT INTO " + queue + " (order_id) VALUES ");
    for (int i = 0; i < n; i++) {
      sql.append(i == 0 ? "" : ", ").append("(").append(i).append(")");
    }
    h.exec(sql.toString());
  }

  static void refuse(String queue, long id, int toState, String message) throws Exception {
    h.exec(
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

  /** Receives and acks {@code n} events, returning their ids. */
  static Set<Long> receiveAndAck(RawReceiver r, int n) throws InterruptedException {
    Set<Long> got = new HashSet<>();
    for (int i = 0; i < n; i++) {
      Event e = r.events.poll(15, TimeUnit.SECONDS);
      assertThat(e).as("event %d of %d received", i + 1, n).isNotNull();
      got.add(e.getId());
      r.ack(e);
    }
    return got;
  }

  @Test
  void aRowThatRefusesItsAckHoldsUpNoOtherAck() throws Exception {
    h.createQueue("ack_refused", "ack_wait=60s min_backoff=100ms max_backoff=400ms");
    await().atMost(10, SECONDS).until(() -> h.server().engine().find("ack_refused").isPresent());
    insert("ack_refused", 100);
    long bad = h.queryLong("SELECT MIN(id) + 2 FROM ack_refused");
    refuse("ack_refused", bad, 2, "row 3 refuses its ack");
    RawReceiver r = h.rawReceiver("ack_refused", "r1", 100);
    assertThat(receiveAndAck(r, 100)).contains(bad);
    await()
        .atMost(30, SECONDS)
        .until(() -> h.queryLong("SELECT COUNT(*) FROM ack_refused WHERE state = 2") == 99);
    await()
        .atMost(10, SECONDS)
        .until(
            () ->
                r.results.stream()
                        .filter(x -> x.getStatus() == AckStatus.ACK_STATUS_OK)
                        .filter(x -> x.getEvent().getId() != bad)
                        .count()
                    == 99);
    insert("ack_refused", 50);
    receiveAndAck(r, 50);
    await()
        .atMost(30, SECONDS)
        .until(() -> h.queryLong("SELECT COUNT(*) FROM ack_refused WHERE state = 2") == 149);
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
    h.createQueue("fire_refused", "ack_wait=60s min_backoff=100ms max_backoff=400ms");
    await().atMost(10, SECONDS).until(() -> h.server().engine().find("fire_refused").isPresent());
    insert("fire_refused", 20);
    long bad = h.queryLong("SELECT MIN(id) + 2 FROM fire_refused");
    refuse("fire_refused", bad, 1, "row 3 refuses to fire");
    RawReceiver r = h.rawReceiver("fire_refused", "r1", 100);
    assertThat(receiveAndAck(r, 19)).doesNotContain(bad);
    insert("fire_refused", 10);
    assertThat(receiveAndAck(r, 10)).doesNotContain(bad);
    await()
        .atMost(60, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM fire_refused WHERE id = ?", bad) == 3);
    assertThat(
            h.queryString(
                "SELECT reason FROM sluice_dead_reason WHERE queue = 'fire_refused' AND id = ?",
                bad))
        .contains("row 3 refuses to fire");
    await()
        .atMost(30, SECONDS)
        .until(() -> h.queryLong("SELECT COUNT(*) FROM fire_refused WHERE state = 2") == 29);
  }
}
