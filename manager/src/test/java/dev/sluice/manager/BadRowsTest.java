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
    assertThat(counter("sluice_bad_rows", "bad_state", "reason", "unknown_state")).isPositive();
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

  /** Finding 14: BIGINT UNSIGNED values above 2^63 arrive exactly, as their decimal string. */
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
    Event max = a.getColumnsMap().get("big").hasStringValue() ? a : b;
    Event five = max == a ? b : a;
    assertThat(max.getColumnsMap().get("big").getStringValue()).isEqualTo("18446744073709551615");
    assertThat(five.getColumnsMap().get("big").getIntValue()).isEqualTo(5);
    r.ack(a);
    r.ack(b);
  }
}
