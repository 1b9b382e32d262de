package dev.sluice.core.queue;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.DebounceOutcome;
import dev.sluice.client.DebounceOutcome.Result;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.QueueConvention;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Debounced inserts racing a live engine's fires: producers debounce a few keys over and over, in
 * their own transactions, with due times a few milliseconds to a fifth of a second ahead, while an
 * outlet takes and acks what fires. Each key makes one row, delivered once, with the columns and
 * the due time of the last debounce that replaced it before it fired; a debounce after the fire
 * writes nothing and names the fired row.
 */
class DebounceDeliveryTest {
  static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.fresh(DebounceDeliveryTest.class).managerId("debounce-test").start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  /** The last write of a key: its version column, its due time, its id. */
  record Write(long version, long dueNs, long id) {}

  @Test
  void debouncesRacingTheFireDeliverTheLastVersionOnce() throws Exception {
    String queue = "debounce_orders";
    h.createQueue(
        queue,
        QueueConvention.createTableSql(
            queue, List.of("`version` BIGINT NULL"), "sluice_queue", true));
    CollectingOutlet out = h.subscribe(queue, 16);
    int producers = 6;
    int keys = 12;
    int rounds = 80;
    Object[] keyLocks = new Object[keys];
    for (int k = 0; k < keys; k++) {
      keyLocks[k] = new Object();
    }
    Map<String, Write> last = new ConcurrentHashMap<>();
    AtomicLong versions = new AtomicLong();
    AtomicInteger replaced = new AtomicInteger();
    AtomicInteger notPending = new AtomicInteger();
    Set<String> firedKeys = ConcurrentHashMap.newKeySet();
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
                    h.ack(queue, out, d);
                  }
                }
                return null;
              });
      for (int p = 0; p < producers; p++) {
        done.add(
            pool.submit(
                () -> {
                  go.await();
                  try (Connection c = h.db().connect()) {
                    c.setAutoCommit(false);
                    // At least `rounds` debounces each, and on until every key was fired under
                    // them (seen NOT_PENDING), however fast the manager reads the table.
                    for (int r = 0; r < rounds || firedKeys.size() < keys; r++) {
                      ThreadLocalRandom rnd = ThreadLocalRandom.current();
                      int k = rnd.nextInt(keys);
                      String key = "order-" + k;
                      // One debounce of a key at a time, so that the commit order is known; the
                      // race under test is with the manager's fire, not between producers.
                      synchronized (keyLocks[k]) {
                        long version = versions.incrementAndGet();
                        Instant at = Instant.now().plusMillis(rnd.nextInt(200));
                        long atNs = at.getEpochSecond() * 1_000_000_000L + at.getNano();
                        DebounceOutcome o =
                            EventProducer.insertDebounced(
                                c,
                                queue,
                                key,
                                Map.of("version", version),
                                EventOptions.builder().fireAt(at).build());
                        Thread.sleep(rnd.nextInt(2));
                        c.commit();
                        Write before = last.get(key);
                        switch (o.result()) {
                          case INSERTED -> assertThat(before).isNull();
                          case REPLACED -> {
                            assertThat(o.id()).isEqualTo(before.id());
                            replaced.incrementAndGet();
                          }
                          case NOT_PENDING -> {
                            assertThat(o.id()).isEqualTo(before.id());
                            notPending.incrementAndGet();
                            firedKeys.add(key);
                          }
                        }
                        if (o.result() != Result.NOT_PENDING) {
                          last.put(key, new Write(version, atNs, o.id()));
                        }
                      }
                      Thread.sleep(rnd.nextInt(5));
                    }
                  }
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(120, SECONDS);
      }
      assertThat(last).hasSize(keys);
      await()
          .atMost(30, SECONDS)
          .until(() -> h.queryLong("SELECT COUNT(*) FROM " + queue + " WHERE state = 2") == keys);
      assertThat(h.queryLong("SELECT COUNT(*) FROM " + queue)).isEqualTo(keys);
      // Acked, the rows still hold their keys: a debounce writes nothing and names the row.
      try (Connection c = h.db().connect()) {
        for (Map.Entry<String, Write> e : last.entrySet()) {
          DebounceOutcome o =
              EventProducer.insertDebounced(c, queue, e.getKey(), Map.of("version", -1L));
          assertThat(o.result()).isEqualTo(Result.NOT_PENDING);
          assertThat(o.id()).isEqualTo(e.getValue().id());
        }
      }
      assertThat(h.queryLong("SELECT COUNT(*) FROM " + queue + " WHERE version = -1")).isZero();
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(5))
          .until(() -> out.all.size() == keys);
      List<String> expected = new ArrayList<>();
      for (Write w : last.values()) {
        expected.add(w.id() + " v" + w.version() + " due " + w.dueNs());
      }
      assertThat(out.all)
          .extracting(
              d ->
                  d.id()
                      + " v"
                      + ((Number) d.columns().get("version")).longValue()
                      + " due "
                      + d.dueNs())
          .containsExactlyInAnyOrderElementsOf(expected);
      // The race was run: some debounces replaced a pending event, some came after its fire.
      assertThat(replaced.get()).isPositive();
      assertThat(notPending.get()).isPositive();
      acking.set(false);
      acker.get(5, SECONDS);
    } finally {
      acking.set(false);
      pool.shutdownNow();
    }
  }
}
