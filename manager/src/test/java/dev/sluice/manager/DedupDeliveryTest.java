package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.client.InsertOutcome;
import dev.sluice.db.QueueConvention;
import dev.sluice.receiver.SluiceReceiver;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Deduplicated inserts against a live manager and the real SDK: eight producers insert the same
 * keys at once, in their own transactions, while the receiver handles and acks what is already
 * there. Every key makes one row, every producer of a key gets its id, and the receiver sees each
 * key's event once, with its {@code dedup_key} as a column; a duplicate inserted after the first
 * was acked is delivered no more.
 */
class DedupDeliveryTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(DedupDeliveryTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void concurrentDuplicatesAreInsertedOnceAndDeliveredOnce() throws Exception {
    h.exec(
        QueueConvention.createTableSql(
            "dedup_orders", List.of("`producer` INT NULL"), "sluice_queue", true));
    await().atMost(15, SECONDS).until(() -> h.server().engine().find("dedup_orders").isPresent());
    List<String> seen = new CopyOnWriteArrayList<>();
    h.closeLater(
        SluiceReceiver.builder()
            .target(h.target())
            .queue("dedup_orders")
            .concurrency(8)
            .handler(e -> seen.add(e.id() + ":" + e.getString("dedup_key")))
            .build()
            .start());

    int producers = 8;
    int keys = 40;
    Map<String, List<InsertOutcome>> byKey = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(producers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    try {
      for (int p = 0; p < producers; p++) {
        int producer = p;
        done.add(
            pool.submit(
                () -> {
                  go.await();
                  try (Connection c = h.connect()) {
                    c.setAutoCommit(false);
                    for (int k = 0; k < keys; k++) {
                      String key = "order-" + k;
                      InsertOutcome o =
                          EventProducer.insertUnique(
                              c, "dedup_orders", key, Map.of("producer", producer));
                      // Holds the key 0-2 ms before the commit, so that the producers
                      // interleave (a load shape), not a wait.
                      Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                      c.commit();
                      byKey.computeIfAbsent(key, x -> new CopyOnWriteArrayList<>()).add(o);
                    }
                  }
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(120, SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(h.queryLong("SELECT COUNT(*) FROM dedup_orders")).isEqualTo(keys);
    List<String> expected = new ArrayList<>();
    for (int k = 0; k < keys; k++) {
      List<InsertOutcome> outcomes = byKey.get("order-" + k);
      assertThat(outcomes).hasSize(producers);
      assertThat(outcomes.stream().map(InsertOutcome::id).distinct()).hasSize(1);
      assertThat(outcomes.stream().filter(o -> !o.duplicate())).hasSize(1);
      expected.add(outcomes.get(0).id() + ":order-" + k);
    }
    await()
        .atMost(30, SECONDS)
        .until(() -> h.queryLong("SELECT COUNT(*) FROM dedup_orders WHERE state = 2") == keys);

    // Acked, the rows still hold their keys: inserting them again delivers nothing new.
    try (Connection c = h.connect()) {
      for (int k = 0; k < keys; k++) {
        assertThat(
                EventProducer.insertUnique(c, "dedup_orders", "order-" + k, Map.of()).duplicate())
            .isTrue();
      }
    }
    await()
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(5))
        .until(() -> seen.size() == keys);
    assertThat(seen).containsExactlyInAnyOrderElementsOf(expected);
  }
}
