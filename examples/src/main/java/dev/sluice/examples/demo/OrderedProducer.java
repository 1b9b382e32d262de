package dev.sluice.examples.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The application side of {@code sluice demo --ordered}: orders with their events, as {@link
 * DemoProducer} writes them (with the same rollbacks, schedules ahead and cancels), but each event
 * belongs to a key ({@code key-000}, ...) and carries its number within the key ({@code key_seq},
 * 1, 2, ...).
 *
 * <p>The application serialises its writes per key, as ordered delivery requires: each writer
 * thread owns a fixed subset of the keys (key {@code k} belongs to writer {@code k % writers}) and
 * commits one key's events one after the other, so a key's ids grow with its numbers. A writer
 * writes a burst of one to four events to one key at a time, so keys build a backlog for the
 * manager to hold. Each key goes to the shard {@link DemoDatabase#shardForKey} routes it to, with
 * all its events.
 *
 * <p>{@link #run} starts the writers and returns when all are done; each writer thread owns its
 * keys' numbers and its own random source.
 */
final class OrderedProducer implements Runnable {
  static final int WRITERS = 4;
  private static final int MAX_BURST = 4;

  private final DemoDatabase db;
  private final Canceller canceller;
  private final Ledger ledger;
  private final int orders;
  private final int keys;
  private final long periodNs;
  private final long seed;
  private final AtomicLong nextOrderId = new AtomicLong(1);
  private final java.util.concurrent.atomic.AtomicReference<Throwable> failure =
      new java.util.concurrent.atomic.AtomicReference<>();

  /**
   * @param orders transactions to run in all, each writing one order and one event
   * @param keys ordering keys, spread over the writers
   * @param ratePerSecond transactions per second, all writers together
   */
  OrderedProducer(
      DemoDatabase db,
      Canceller canceller,
      Ledger ledger,
      int orders,
      int keys,
      int ratePerSecond,
      long seed) {
    this.db = db;
    this.canceller = canceller;
    this.ledger = ledger;
    this.orders = orders;
    this.keys = keys;
    this.periodNs = 1_000_000_000L * Math.min(WRITERS, keys) / ratePerSecond;
    this.seed = seed;
  }

  /** The name of key number {@code k}: what goes into {@code ordering_key}. */
  static String keyName(int k) {
    return String.format("key-%03d", k);
  }

  @Override
  public void run() {
    int writers = Math.min(WRITERS, keys);
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      int writer = w;
      int share = orders / writers + (w < orders % writers ? 1 : 0);
      Thread t =
          new Thread(
              () -> {
                try {
                  write(writer, writers, share);
                } catch (RuntimeException | Error e) {
                  failure.compareAndSet(null, e);
                }
              },
              "demo-producer-" + w);
      threads.add(t);
      t.start();
    }
    try {
      for (Thread t : threads) {
        t.join();
      }
    } catch (InterruptedException e) {
      threads.forEach(Thread::interrupt);
      Thread.currentThread().interrupt();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("a writer failed: " + failure.get(), failure.get());
    }
  }

  /** One writer: {@code count} transactions on the keys {@code k % writers == writer}. */
  private void write(int writer, int writers, int count) {
    Random random = new Random(seed + 7919L * writer);
    List<Integer> owned = new ArrayList<>();
    for (int k = writer; k < keys; k += writers) {
      owned.add(k);
    }
    long[] lastSeq = new long[keys];
    long start = System.nanoTime();
    int done = 0;
    while (done < count) {
      int k = owned.get(random.nextInt(owned.size()));
      String key = keyName(k);
      DemoDatabase.Shard shard = db.shardForKey(key);
      int burst = 1 + random.nextInt(MAX_BURST);
      for (int b = 0; b < burst && done < count; b++, done++) {
        // Pacing against the start time keeps each writer's share of the rate steady.
        long due = start + done * periodNs;
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
          LockSupport.parkNanos(wait);
        }
        if (Thread.currentThread().isInterrupted()) {
          return;
        }
        // A number per attempt: a rolled-back one leaves a gap, which is fine for the checker.
        long seq = ++lastSeq[k];
        DemoProducer.write(
            shard,
            canceller,
            ledger,
            nextOrderId.getAndIncrement(),
            DemoProducer.Plan.draw(random),
            Map.of(OrderChecker.KEY_COLUMN, key, OrderChecker.SEQ_COLUMN, seq));
      }
    }
  }
}
