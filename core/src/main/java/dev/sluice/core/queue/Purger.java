package dev.sluice.core.queue;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes acked and cancelled events older than {@code purge_after}, in bounded batches (so that no
 * single DELETE holds many row locks or bloats the undo log). Runs on the shard's maintenance
 * thread; dead events stay until an operator replays or purges them.
 */
final class Purger implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Purger.class);
  static final int BATCH = 1000;

  private final QueueContext ctx;
  private final LoopRunner runner;
  private volatile boolean running = true;
  private volatile ScheduledFuture<?> task;
  private volatile ScheduledExecutorService maintenance;

  Purger(QueueContext ctx) {
    this.ctx = ctx;
    this.runner = new LoopRunner(ctx.faults(), FaultHook.PURGER);
  }

  /** Runs every {@link #intervalMs} on {@code maintenance}, until {@link #stop}. */
  void start(ScheduledExecutorService maintenance) {
    this.maintenance = maintenance;
    scheduleNext();
  }

  /**
   * A tenth of the queue's current purge_after, between 1 s and 1 min. Read anew for each turn, so
   * that an in-place {@code ALTER} of purge_after changes how often the purge runs, not only its
   * cutoff.
   */
  long intervalMs() {
    return Math.max(1_000, Math.min(60_000, ctx.options().purgeAfter().toMillis() / 10));
  }

  private void scheduleNext() {
    ScheduledExecutorService m = maintenance;
    if (!running || m == null) {
      return;
    }
    try {
      task = m.schedule(this, intervalMs(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // the shard's maintenance executor is shutting down: the queue is stopping with it
    }
  }

  void stop() {
    running = false;
    ScheduledFuture<?> t = task;
    if (t != null) {
      t.cancel(false);
    }
  }

  @Override
  public void run() {
    try {
      runner.once(this::pass); // counted and logged; it runs again at its next turn
    } catch (FaultHook.InjectedFault fatal) { // reported as the loop's death; the turns go on
      ctx.faults().handler(FaultHook.PURGER).uncaughtException(Thread.currentThread(), fatal);
    } finally {
      scheduleNext();
    }
  }

  private void pass() {
    FaultHook.check(FaultHook.PURGER, ctx.queue());
    long cutoff = ctx.clock().nowNs() - ctx.options().purgeAfter().toNanos();
    long total = 0;
    int n;
    try {
      do {
        n = ctx.store().purge(cutoff, BATCH);
        total += n;
      } while (n == BATCH && running);
    } catch (RuntimeException e) {
      ctx.metrics().dbErrors.increment();
      throw e;
    }
    if (total > 0) {
      ctx.metrics().purged.increment(total);
      log.debug("{}: purged {} settled events", ctx.where(), total);
    }
  }
}
