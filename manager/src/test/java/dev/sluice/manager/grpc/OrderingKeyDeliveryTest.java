package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.receiver.ReceivedEvent;
import dev.sluice.receiver.RetryLater;
import dev.sluice.receiver.SluiceReceiver;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a receiver of an ordered queue sees, through a real table, a real manager and the real SDK:
 * each delivery carries its ordering key ({@link ReceivedEvent#orderingKey()}: the column's value
 * as text, "" for a queue ordered as one key, null for a NULL key or an unordered queue), and a
 * key's events reach the handlers one at a time, in id order, a retried one before the next.
 */
class OrderingKeyDeliveryTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(OrderingKeyDeliveryTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  /**
   * A queue table with the user columns and, when given, the ordering index, seen by the manager.
   */
  static void queue(String name, List<String> columns, String options, String orderingIndex)
      throws Exception {
    String sql = QueueConvention.createTableSql(name, columns, ("sluice_queue " + options).strip());
    if (orderingIndex != null) {
      sql =
          sql.replace(
              "  KEY `" + QueueConvention.POLL_INDEX + "`",
              "  KEY `"
                  + QueueConvention.ORDERING_INDEX
                  + "` "
                  + orderingIndex
                  + ",\n"
                  + "  KEY `"
                  + QueueConvention.POLL_INDEX
                  + "`");
    }
    h.exec(sql);
    await().atMost(15, SECONDS).until(() -> h.server().engine().find(name).isPresent());
  }

  /** One handler call: the event's id, its key as delivered, its column's key, its attempt. */
  record Seen(long id, String orderingKey, Object column, long attempt) {}

  /** Records every call, and whether two events of one key were ever in the handler together. */
  static final class Recorder {
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    final Map<String, AtomicInteger> busy = new ConcurrentHashMap<>();
    final List<String> overlaps = new CopyOnWriteArrayList<>();

    void handle(ReceivedEvent e, String column, Long retryFirstAttemptOf) throws Exception {
      Object value = e.columns().get(column);
      seen.add(new Seen(e.id(), e.orderingKey(), value, e.attempt()));
      String key = e.orderingKey();
      if (key == null) {
        return;
      }
      AtomicInteger n = busy.computeIfAbsent(key, k -> new AtomicInteger());
      if (n.incrementAndGet() > 1) {
        overlaps.add("key " + key + " at event " + e.id());
      }
      try {
        // The handler's work time (a load shape, not a wait): room for a second event of the key
        // to arrive, were it sent.
        Thread.sleep(20);
        if (retryFirstAttemptOf != null && e.id() == retryFirstAttemptOf && e.attempt() == 1) {
          throw new RetryLater(Duration.ofMillis(200), "first attempt of " + e.describe());
        }
      } finally {
        n.decrementAndGet();
      }
    }

    /** The ids handled for each key, in the order the handler saw them (retries included). */
    Map<String, List<Long>> idsByKey() {
      Map<String, List<Long>> m = new HashMap<>();
      for (Seen s : seen) {
        if (s.orderingKey() != null) {
          m.computeIfAbsent(s.orderingKey(), k -> new ArrayList<>()).add(s.id());
        }
      }
      return m;
    }
  }

  SluiceReceiver receiver(String queue, Recorder r, String column, Long retryFirstAttemptOf) {
    return h.closeLater(
        SluiceReceiver.builder()
            .target(h.target())
            .queue(queue)
            .concurrency(8)
            .handler(e -> r.handle(e, column, retryFirstAttemptOf))
            .build()
            .start());
  }

  static long acked(String queue) throws Exception {
    return h.queryLong("SELECT COUNT(*) FROM `" + queue + "` WHERE state = 2");
  }

  @Test
  void anOrderedQueuesReceiverSeesEachEventsKeyAndAKeysEventsOneAtATimeInIdOrder()
      throws Exception {
    queue(
        "ord_accounts",
        List.of("`ordering_key` VARCHAR(64) NULL", "`n` INT NULL"),
        "ordering=key min_backoff=50ms max_backoff=200ms",
        "(`ordering_key`, `state`, `id`)");
    List<Long> ids = new ArrayList<>();
    try (Connection c = h.connect()) {
      for (int i = 0; i < 18; i++) {
        Map<String, Object> cols = new HashMap<>();
        cols.put("ordering_key", i % 6 == 5 ? null : List.of("acct-1", "acct-2").get(i % 2));
        cols.put("n", i);
        ids.add(EventProducer.insert(c, "ord_accounts", cols));
      }
    }
    long retried = ids.get(0); // acct-1's first event: its retry must come before acct-1's next
    Recorder r = new Recorder();
    receiver("ord_accounts", r, "ordering_key", retried);

    await().atMost(60, SECONDS).until(() -> acked("ord_accounts") == ids.size());
    for (Seen s : r.seen) {
      assertThat(s.orderingKey()).as("the key of event %d", s.id()).isEqualTo(s.column());
    }
    assertThat(r.seen.stream().filter(s -> s.column() == null).map(Seen::orderingKey))
        .as("a NULL key is no key")
        .hasSize(3)
        .containsOnlyNulls();
    assertThat(r.overlaps).as("two events of one key in the handler at once").isEmpty();
    Map<String, List<Long>> byKey = r.idsByKey();
    List<Long> acct1 = byKey.get("acct-1");
    assertThat(acct1.subList(0, 2))
        .as("acct-1's first event, retried, before its second")
        .containsExactly(retried, retried);
    assertThat(acct1.subList(1, acct1.size())).isSorted().doesNotHaveDuplicates();
    assertThat(byKey.get("acct-2")).isSorted().doesNotHaveDuplicates().hasSize(6);
  }

  @Test
  void anIntegerKeyArrivesInDecimalAndAQueueOrderedAsOneKeyHasTheEmptyKey() throws Exception {
    queue(
        "ord_numbers",
        List.of("`account_id` BIGINT NULL"),
        "ordering=key ordering_column=account_id",
        "(`account_id`, `state`, `id`)");
    queue("ord_whole", List.of("`n` INT NULL"), "ordering=queue", "(`state`, `id`)");
    h.createQueue("unordered_q", "");
    await().atMost(15, SECONDS).until(() -> h.server().engine().find("unordered_q").isPresent());
    try (Connection c = h.connect()) {
      for (int i = 0; i < 4; i++) {
        EventProducer.insert(c, "ord_numbers", Map.of("account_id", -9_000_000_000L + i % 2));
        EventProducer.insert(c, "ord_whole", Map.of("n", i));
        EventProducer.insert(c, "unordered_q", Map.of("order_id", (long) i));
      }
    }
    Recorder numbers = new Recorder();
    Recorder whole = new Recorder();
    Recorder unordered = new Recorder();
    receiver("ord_numbers", numbers, "account_id", null);
    receiver("ord_whole", whole, "n", null);
    receiver("unordered_q", unordered, "order_id", null);

    await()
        .atMost(60, SECONDS)
        .until(
            () ->
                acked("ord_numbers") == 4 && acked("ord_whole") == 4 && acked("unordered_q") == 4);
    assertThat(numbers.seen)
        .extracting(Seen::orderingKey)
        .containsOnly("-9000000000", "-8999999999")
        .hasSize(4);
    assertThat(whole.seen).extracting(Seen::orderingKey).containsOnly("").hasSize(4);
    assertThat(whole.idsByKey().get("")).as("one key: the queue in id order").isSorted();
    assertThat(whole.overlaps).isEmpty();
    assertThat(unordered.seen).extracting(Seen::orderingKey).containsOnlyNulls().hasSize(4);
  }
}
