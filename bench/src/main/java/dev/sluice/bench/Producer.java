package dev.sluice.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * An application inserting events at a fixed rate, one event per transaction (BEGIN, INSERT,
 * COMMIT), from a few threads with a connection each. Event {@code i} is sent at {@code start + i /
 * rate}; a thread that falls behind catches up without sleeping, so the rate holds as long as the
 * server keeps up (the report prints the rate achieved).
 */
public final class Producer {
  /** Binds the statement's parameters for event {@code i}. */
  @FunctionalInterface
  public interface Binder {
    void bind(PreparedStatement ps, long i) throws Exception;
  }

  private final Database db;
  private final String sql;
  private final Binder binder;
  private final int threads;
  private final AtomicLong next = new AtomicLong();
  private final AtomicLong sent = new AtomicLong();

  /**
   * Nanoseconds from each INSERT to its COMMIT's return. An event's due time is set at the INSERT,
   * and no poller can see the row before the COMMIT: this is the part of due→delivered that is the
   * producer's own.
   */
  private final ConcurrentHistogram commitLatency = new ConcurrentHistogram(3);

  public Producer(Database db, String sql, Binder binder, int threads) {
    this.db = db;
    this.sql = sql;
    this.binder = binder;
    this.threads = threads;
  }

  public long sent() {
    return sent.get();
  }

  /** INSERT → COMMIT times so far (ns). */
  public Histogram commitLatency() {
    return commitLatency.copy();
  }

  /** Inserts {@code rate * seconds} events at {@code rate} per second; returns when done. */
  public void run(double rate, double seconds) throws Exception {
    long total = Math.round(rate * seconds);
    long start = System.nanoTime();
    double nsPerEvent = 1e9 / rate;
    AtomicReference<Exception> failure = new AtomicReference<>();
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th =
          new Thread(
              () -> {
                try (Connection c = db.connect()) {
                  c.setAutoCommit(false);
                  try (PreparedStatement ps = c.prepareStatement(sql)) {
                    long i;
                    while ((i = next.getAndIncrement()) < total && failure.get() == null) {
                      long at = start + (long) (i * nsPerEvent);
                      long wait;
                      while ((wait = at - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(wait);
                      }
                      binder.bind(ps, i);
                      long t0 = System.nanoTime();
                      ps.executeUpdate();
                      c.commit();
                      commitLatency.recordValue(System.nanoTime() - t0);
                      sent.incrementAndGet();
                    }
                  }
                } catch (Exception e) {
                  failure.compareAndSet(null, e);
                }
              },
              "producer-" + t);
      th.setDaemon(true);
      th.start();
      ts.add(th);
    }
    for (Thread th : ts) {
      th.join();
    }
    if (failure.get() != null) {
      throw failure.get();
    }
  }
}
