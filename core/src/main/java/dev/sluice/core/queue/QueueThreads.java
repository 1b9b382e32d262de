package dev.sluice.core.queue;

import dev.sluice.core.queue.context.QueueContext;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker threads of one queue ({@code sluice-<shard>-<queue>-dispatcher}, {@code -firer-1},
 * {@code -firer-2}, {@code -acks}, {@code -poller}): made, started and joined by the queue's
 * manager, each a daemon whose death is reported as the queue's fault. Used under the queue
 * manager's monitor, which owns it.
 */
final class QueueThreads {
  private static final Logger log = LoggerFactory.getLogger(QueueThreads.class);

  private final QueueContext ctx;
  private final List<Thread> threads = new ArrayList<>();

  QueueThreads(QueueContext ctx) {
    this.ctx = ctx;
  }

  /** Adds {@code loop}'s thread, named for the queue and {@code suffix}; not started yet. */
  void add(Runnable loop, String loopName, String suffix) {
    String prefix = "sluice-" + ctx.shard() + "-" + ctx.queue() + "-";
    Thread t = new Thread(loop, prefix + suffix);
    t.setDaemon(true);
    t.setUncaughtExceptionHandler(ctx.faults().handler(loopName));
    threads.add(t);
  }

  void start() {
    for (Thread t : threads) {
      t.start();
    }
  }

  /** Whether every thread is alive. */
  boolean allAlive() {
    for (Thread t : threads) {
      if (!t.isAlive()) {
        return false;
      }
    }
    return true;
  }

  boolean noneAlive() {
    return threads.stream().noneMatch(Thread::isAlive);
  }

  /** Waits up to {@code ms} for every thread to end, saying nothing; true when none runs. */
  boolean awaitEnd(long ms) {
    long deadline = ctx.clock().monoNs() + ms * 1_000_000;
    for (Thread t : threads) {
      long left = (deadline - ctx.clock().monoNs()) / 1_000_000;
      if (left > 0) {
        try {
          t.join(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return noneAlive();
        }
      }
    }
    return noneAlive();
  }

  /**
   * Waits for each thread to end, until {@code deadline} (the queue clock's monotonic ns) at the
   * latest, giving each at least {@code minMs}.
   */
  void join(long deadline, long minMs) {
    for (Thread t : threads) {
      long left = Math.max(minMs, (deadline - ctx.clock().monoNs()) / 1_000_000);
      try {
        t.join(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (t.isAlive()) {
        log.warn("{}: thread {} did not stop in time", ctx.where(), t.getName());
      }
    }
  }
}
