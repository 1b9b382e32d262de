package dev.sluice.examples.demo;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * Stall detection: while the poison demo runs, one canary event per second goes into every watched
 * queue, and each must be acked (as the table shows) within {@link #BOUND}. A queue with a canary
 * older than that, not acked, is stalled — whatever the manager says about its health.
 *
 * <p>Threads: one thread ({@code demo-canaries}) inserts and checks; {@link #watch} and the getters
 * may be called from any thread (the per-queue records are concurrent).
 */
final class Canaries implements AutoCloseable {
  static final Duration BOUND = Duration.ofSeconds(15);
  private static final long EVERY_NS = TimeUnit.SECONDS.toNanos(1);
  private static final long CHECK_MS = 200;

  /** Adds one canary event to a queue and returns its id. */
  interface Inserter {
    long insert() throws SQLException;
  }

  /** One queue's canaries; its counters are written by the canary thread only, read by any. */
  static final class Watched {
    final String queue;
    final Inserter inserter;
    final ConcurrentLinkedQueue<long[]> outstanding = new ConcurrentLinkedQueue<>(); // id, sentNs
    volatile long sent;
    volatile long acked;
    volatile long maxLatencyMs;
    volatile long insertFailures;
    volatile String stall;
    volatile long lastSentNs;
    volatile long lastAckedSentNs = Long.MIN_VALUE;

    Watched(String queue, Inserter inserter) {
      this.queue = queue;
      this.inserter = inserter;
    }
  }

  private final PoisonTables tables;
  private final Map<String, Watched> watched = new ConcurrentHashMap<>();
  private final Thread thread = new Thread(this::loop, "demo-canaries");
  private final long startNs = System.nanoTime();
  private final java.util.concurrent.atomic.AtomicLong loopErrors =
      new java.util.concurrent.atomic.AtomicLong();
  private volatile boolean inserting = true;
  private volatile boolean running = true;

  Canaries(PoisonTables tables) {
    this.tables = tables;
  }

  Canaries start() {
    thread.setDaemon(true);
    thread.start();
    return this;
  }

  /** From now on a canary goes into {@code queue} every second. */
  void watch(String queue, Inserter inserter) {
    watched.putIfAbsent(queue, new Watched(queue, inserter));
  }

  /** Stops adding canaries; those out keep being checked. */
  void stopInserting() {
    inserting = false;
  }

  /** Waits until every canary out is acked or overdue (at most {@link #BOUND} and a second). */
  void awaitSettled() throws InterruptedException {
    long deadline = System.nanoTime() + BOUND.toNanos() + EVERY_NS;
    while (System.nanoTime() < deadline) {
      if (watched.values().stream().allMatch(w -> w.outstanding.isEmpty() || w.stall != null)) {
        return;
      }
      Thread.sleep(CHECK_MS);
    }
  }

  /** The first acked canary of a queue at or after {@code sinceNs} (System.nanoTime), if any. */
  boolean ackedSince(String queue, long sinceNs) {
    Watched w = watched.get(queue);
    return w != null && w.acked > 0 && w.lastAckedSentNs >= sinceNs;
  }

  /** Checks that failed (a database error, say) and were retried. */
  long loopErrors() {
    return loopErrors.get();
  }

  /** Watched queues, by name. */
  List<Watched> all() {
    List<Watched> out = new ArrayList<>(watched.values());
    out.sort((a, b) -> a.queue.compareTo(b.queue));
    return out;
  }

  /** Stalled queues, with what showed it. */
  Map<String, String> stalled() {
    Map<String, String> out = new LinkedHashMap<>();
    for (Watched w : all()) {
      if (w.stall != null) {
        out.put(w.queue, w.stall);
      }
    }
    return out;
  }

  private void loop() {
    long nextInsert = System.nanoTime();
    while (running) {
      try {
        long now = System.nanoTime();
        if (inserting && now >= nextInsert) {
          nextInsert = now + EVERY_NS;
          for (Watched w : watched.values()) {
            insert(w, now);
          }
        }
        for (Watched w : watched.values()) {
          check(w);
        }
        Thread.sleep(CHECK_MS);
      } catch (InterruptedException e) {
        return;
      } catch (Throwable t) {
        // A failed check is counted and retried at the next one; the loop keeps going.
        loopErrors.incrementAndGet();
      }
    }
  }

  private void insert(Watched w, long now) {
    try {
      long id = w.inserter.insert();
      w.outstanding.add(new long[] {id, now});
      w.sent++;
      w.lastSentNs = now;
    } catch (SQLException | RuntimeException e) {
      w.insertFailures++;
    }
  }

  private void check(Watched w) throws SQLException {
    long now = System.nanoTime();
    for (Iterator<long[]> it = w.outstanding.iterator(); it.hasNext(); ) {
      long[] c = it.next();
      int state = tables.state(w.queue, c[0]);
      if (state == PoisonTables.ACKED) {
        it.remove();
        w.acked++;
        w.lastAckedSentNs = Math.max(w.lastAckedSentNs, c[1]);
        w.maxLatencyMs = Math.max(w.maxLatencyMs, (now - c[1]) / 1_000_000);
      } else if (now - c[1] > BOUND.toNanos() && w.stall == null) {
        w.stall =
            String.format(
                "canary %d (sent at +%.1f s) not acked after %d s (state %d)",
                c[0], (c[1] - startNs) / 1e9, BOUND.toSeconds(), state);
      }
    }
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
