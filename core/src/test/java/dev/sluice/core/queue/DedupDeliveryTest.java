package dev.sluice.core.queue;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.client.InsertOutcome;
import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.QueueConvention;
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
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Deduplicated inserts against a live engine: eight producers insert the same keys at once, in
 * their own transactions, while an outlet takes and acks what is already there. Every key makes one
 * row, every producer of a key gets its id, and the outlet is given each key's event once, with its
 * {@code dedup_key} as a column; a duplicate inserted after the first was acked is delivered no
 * more.
 */
class DedupDeliveryTest {
  static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.fresh(DedupDeliveryTest.class).managerId("dedup-test").start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void concurrentDuplicatesAreInsertedOnceAndDeliveredOnce() throws Exception {
    h.createQueue(
        "dedup_orders",
        QueueConvention.createTableSql(
            "dedup_orders", List.of("`producer` INT NULL"), "sluice_queue", true));
    CollectingOutlet out = h.subscribe("dedup_orders", 8);
    int producers = 8;
    int keys = 40;
    Map<String, List<InsertOutcome>> byKey = new ConcurrentHashMap<>();
    // One thread for the outlet's side, acking what it is given; the producers' threads insert.
    ExecutorService pool = Executors.newFixedThreadPool(producers + 1);
    AtomicBoolean acking = new AtomicBoolean(true);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    try {
      Future<?> acker =
          pool.submit(
              () -> {
                while (acking.get()) {
                  Delivery d = out.next(100);
                  if (d != null) {
                    h.ack("dedup_orders", out, d);
                  }
                }
                return null;
              });
      for (int p = 0; p < producers; p++) {
        int producer = p;
        done.add(
            pool.submit(
                () -> {
                  go.await();
                  try (Connection c = h.db().connect()) {
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
      try (Connection c = h.db().connect()) {
        for (int k = 0; k < keys; k++) {
          assertThat(
                  EventProducer.insertUnique(c, "dedup_orders", "order-" + k, Map.of()).duplicate())
              .isTrue();
        }
      }
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(5))
          .until(() -> out.all.size() == keys);
      assertThat(out.all)
          .extracting(d -> d.id() + ":" + d.columns().get("dedup_key"))
          .containsExactlyInAnyOrderElementsOf(expected);
      acking.set(false);
      acker.get(5, SECONDS);
    } finally {
      acking.set(false);
      pool.shutdownNow();
    }
  }
}
