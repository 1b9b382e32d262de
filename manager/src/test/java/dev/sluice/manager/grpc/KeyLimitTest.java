package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code key_max_in_flight} against a real manager, table and receivers: never more than N events
 * of a key in flight, other keys not held back, a dropped stream's events come back under the same
 * limit, and rows a previous leader fired count until they settle.
 */
class KeyLimitTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(KeyLimitTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static String createTable(String name, String comment) {
    return QueueConvention.createTableSql(
        name,
        List.of(
            "`order_id` BIGINT NULL",
            "`ordering_key` VARCHAR(64) NULL",
            "KEY `sluice_ordering` (`ordering_key`, `state`, `id`)"),
        comment);
  }

  static void insert(String queue, String key, int n) throws Exception {
    StringBuilder sql =
        new StringBuilder("INSERT INTO " + queue + " (order_id, ordering_key) VALUES ");
    for (int i = 0; i < n; i++) {
      sql.append(i == 0 ? "" : ",").append("(").append(i).append(", ");
      sql.append(key == null ? "NULL" : "'" + key + "'").append(")");
    }
    h.exec(sql.toString());
  }

  /** What {@code r} receives until nothing more comes for {@code quietMs}. */
  static List<Event> drain(RawReceiver r, long quietMs) throws Exception {
    return drain(r, 0, quietMs);
  }

  /**
   * What {@code r} receives: at least {@code atLeast} events (waiting up to 30 s for them, however
   * slow the machine), then whatever more comes until nothing does for {@code quietMs}.
   */
  static List<Event> drain(RawReceiver r, int atLeast, long quietMs) throws Exception {
    List<Event> got = new ArrayList<>();
    long deadline = System.nanoTime() + SECONDS.toNanos(30);
    while (got.size() < atLeast && System.nanoTime() < deadline) {
      Event e = r.events.poll(100, MILLISECONDS);
      if (e != null) {
        got.add(e);
      }
    }
    Event e;
    while ((e = r.events.poll(quietMs, MILLISECONDS)) != null) {
      got.add(e);
    }
    return got;
  }

  static long ofKey(List<Event> events, String key) {
    return events.stream()
        .filter(e -> key.equals(e.getColumnsMap().get("ordering_key").getStringValue()))
        .count();
  }

  @Test
  void atMostNOfAKeyInFlightAndOtherKeysGoOn() throws Exception {
    h.exec(createTable("klim", "sluice_queue key_max_in_flight=2 ack_wait=60s"));
    await().atMost(10, SECONDS).until(() -> h.server().engine().find("klim").isPresent());
    RawReceiver r = h.rawReceiver("klim", "holder", 100);
    insert("klim", "hot", 10);
    insert("klim", "cold", 3);
    insert("klim", null, 5);

    List<Event> first = drain(r, 9, 1500);
    assertThat(ofKey(first, "hot")).as("hot in flight").isEqualTo(2);
    assertThat(ofKey(first, "cold")).as("cold: under its limit").isEqualTo(2);
    assertThat(first).as("2 hot + 2 cold + 5 without a key").hasSize(9);

    // Acking one hot event lets exactly one more go.
    Event hot = first.stream().filter(e -> ofKey(List.of(e), "hot") == 1).findFirst().orElseThrow();
    r.ack(hot);
    List<Event> next = drain(r, 1, 1500);
    assertThat(ofKey(next, "hot")).isEqualTo(1);
    assertThat(h.queryLong("SELECT COUNT(*) FROM klim WHERE ordering_key = 'hot' AND state = 1"))
        .isEqualTo(2);

    // A dropped stream gives back what it held; a new receiver gets them under the same limit.
    r.close();
    RawReceiver again = h.rawReceiver("klim", "again", 100);
    List<Event> after = drain(again, 2, 2000);
    assertThat(ofKey(after, "hot")).isEqualTo(2);
    assertThat(h.queryLong("SELECT COUNT(*) FROM klim WHERE ordering_key = 'hot' AND state = 1"))
        .isEqualTo(2);
    again.close();
  }

  @Test
  void rowsAPreviousLeaderFiredCountUntilTheySettle() throws Exception {
    // Rows of key "k" fired by "a previous leader" (held by a receiver elsewhere) before this
    // manager serves the table: a comment without the marker first, so it is not discovered yet.
    h.exec(
        createTable("klim_over", "sluice_queue")
            .replace("COMMENT='sluice_queue'", "COMMENT='not a queue yet'"));
    insert("klim_over", "k", 5);
    h.exec(
        "UPDATE klim_over SET state = 1, epoch = 1, time_next = time_next + 600000000000"
            + " WHERE id IN (SELECT id FROM (SELECT id FROM klim_over ORDER BY id LIMIT 2) x)");
    h.exec("ALTER TABLE klim_over COMMENT = 'sluice_queue key_max_in_flight=2'");
    await().atMost(10, SECONDS).until(() -> h.server().engine().find("klim_over").isPresent());
    RawReceiver r = h.rawReceiver("klim_over", "r", 100);
    assertThat(drain(r, 2500)).as("two of k are fired already: none more").isEmpty();

    h.exec("UPDATE klim_over SET state = 2 WHERE state = 1 ORDER BY id LIMIT 1");
    Event one = r.events.poll(10, SECONDS);
    assertThat(one).as("one settled elsewhere: one more goes").isNotNull();
    assertThat(drain(r, 2500)).isEmpty();
    r.close();
  }
}
