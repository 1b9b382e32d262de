package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import io.micrometer.core.instrument.Gauge;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Large payloads: an event over the queue's max_event_bytes goes dead with its reason instead of
 * breaking its receiver's stream; events each under the limit are sent in messages a receiver with
 * gRPC's default inbound limit (4 MiB, as the test's raw receiver has) accepts; the window holds at
 * most cache_bytes of events.
 */
class LargeEventTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(LargeEventTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static void queue(String name, String options) throws Exception {
    h.exec(
        QueueConvention.createTableSql(
            name, List.of("`payload` LONGBLOB NULL"), ("sluice_queue " + options).strip()));
    await().atMost(10, SECONDS).until(() -> h.server().engine().find(name).isPresent());
  }

  /** Inserts one event per size, with a payload of that many bytes; returns their ids. */
  static List<Long> insert(String queue, int... sizes) throws Exception {
    List<Long> ids = new ArrayList<>();
    try (Connection c = h.connect()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO " + queue + " (payload) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
        for (int size : sizes) {
          byte[] b = new byte[size];
          Arrays.fill(b, (byte) 'x');
          ps.setBytes(1, b);
          ps.executeUpdate();
          try (ResultSet rs = ps.getGeneratedKeys()) {
            rs.next();
            ids.add(rs.getLong(1));
          }
        }
      }
      c.commit();
    }
    return ids;
  }

  static int state(String queue, long id) throws Exception {
    return (int) h.queryLong("SELECT state FROM " + queue + " WHERE id = ?", id);
  }

  @Test
  void eventsOfAboutOneMegabyteAreAllDeliveredWithoutBreakingTheStream() throws Exception {
    queue("large_many", "ack_wait=30s min_backoff=10ms max_backoff=20ms max_attempts=3");
    // Each under the default max_event_bytes (1 MiB); six of them are more than a 4 MiB message.
    List<Long> ids =
        insert("large_many", 1_000_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000);
    RawReceiver r = h.rawReceiver("large_many", "r1", 20);
    await().atMost(20, SECONDS).until(() -> r.all.size() >= ids.size() || r.error != null);
    assertThat(r.batchBytes).as("messages of at most 4 MiB").allMatch(n -> n <= 4 << 20);
    assertThat(r.error).as("the receiver's stream was not reset").isNull();
    assertThat(r.all).extracting(Event::getId).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(r.all).extracting(Event::getEpoch).containsOnly(1L);
    assertThat(r.all.get(0).getColumnsMap().get("payload").getBytesValue().size())
        .isEqualTo(1_000_000);
    r.all.forEach(r::ack);
    for (long id : ids) {
      await().atMost(10, SECONDS).until(() -> state("large_many", id) == 2);
    }
  }

  @Test
  void anEventOverTheLimitGoesDeadWithItsReasonAndItsNeighboursAreDelivered() throws Exception {
    queue("large_one", "ack_wait=30s min_backoff=10ms max_backoff=20ms max_attempts=3");
    List<Long> ids = insert("large_one", 100, 5_000_000, 100);
    long big = ids.get(1);
    RawReceiver r = h.rawReceiver("large_one", "r1", 20);
    await().atMost(20, SECONDS).until(() -> state("large_one", big) == 3);
    await().atMost(10, SECONDS).until(() -> r.all.size() >= 2);
    assertThat(r.error).as("the receiver's stream was not reset").isNull();
    assertThat(r.all).extracting(Event::getId).containsExactlyInAnyOrder(ids.get(0), ids.get(2));
    assertThat(h.queryLong("SELECT epoch FROM large_one WHERE id = ?", big))
        .as("never fired: no attempt burnt")
        .isZero();
    assertThat(deadReason("large_one", big)).matches("too large: \\d+ bytes > 1048576");
  }

  @Test
  void theWindowHoldsAtMostCacheBytes() throws Exception {
    queue("large_window", "cache_size=1000 cache_bytes=1MiB");
    int[] sizes = new int[40];
    Arrays.fill(sizes, 100_000);
    List<Long> ids = insert("large_window", sizes);
    // No receiver yet: the window fills as far as its byte budget lets it, and stays there.
    await().atMost(10, SECONDS).until(() -> gauge("sluice.window.events", "large_window") >= 5);
    await()
        .during(1, SECONDS)
        .atMost(3, SECONDS)
        .until(() -> gauge("sluice.window.bytes", "large_window") <= 1_048_576);
    assertThat(gauge("sluice.window.bytes", "large_window")).isBetween(500_000.0, 1_048_576.0);
    assertThat(gauge("sluice.window.events", "large_window")).isBetween(5.0, 10.0);
    RawReceiver r = h.rawReceiver("large_window", "r1", 100);
    await()
        .atMost(20, SECONDS)
        .until(
            () -> {
              Event e;
              while ((e = r.events.poll()) != null) {
                r.ack(e);
              }
              return r.all.size() >= ids.size();
            });
    assertThat(r.all).extracting(Event::getId).containsExactlyInAnyOrderElementsOf(ids);
  }

  static double gauge(String name, String queue) {
    Gauge g = h.registry.find(name).tag("queue", queue).gauge();
    return g == null ? -1 : g.value();
  }

  /** The reason `sluice dead list` shows for a dead event. */
  static String deadReason(String queue, long id) throws Exception {
    try (Connection c = h.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT reason FROM sluice_dead_reason WHERE queue = ? AND id = ?")) {
      ps.setString(1, queue);
      ps.setLong(2, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }
}
