package dev.sluice.core.queue;

import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.loop.LoopRunner;
import dev.sluice.core.queue.context.QueueContext;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes acked and cancelled events older than {@code purge_after}, in bounded batches (so that no
 * single DELETE holds many row locks or bloats the undo log). Runs on the shard's maintenance
 * thread, which owns its state; dead events stay until an operator replays or purges them.
 *
 * <p>With a {@code dedup_window} longer than {@code purge_after} (and a {@code dedup_key} column),
 * the rows that carry a key are kept until the window: every settled row older than the window is
 * deleted as usual, and the unkeyed rows between the two cutoffs by a second DELETE that reads only
 * the part of the (state, time_next) index settled since the previous pass (less {@link
 * #UNKEYED_MARGIN_NS}, for settlements that committed late), so the kept rows are not read again at
 * every pass. The first pass after the queue starts reads the whole range once. An unkeyed row that
 * committed its settlement later than the margin stays until the window.
 */
final class Purger implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Purger.class);
  static final int BATCH = 1000;

  /** How far back each pass's read of unkeyed rows starts before the previous pass's cutoff. */
  static final long UNKEYED_MARGIN_NS = 60_000_000_000L;

  private final QueueContext ctx;
  private final LoopRunner runner;
  private volatile boolean running = true;
  private volatile ScheduledFuture<?> task;
  private volatile ScheduledExecutorService maintenance;

  /** Where the next read of unkeyed rows starts; MIN_VALUE: at the window's cutoff. */
  private long unkeyedFrom = Long.MIN_VALUE;

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
    long now = ctx.clock().nowNs();
    Duration purgeAfter = ctx.options().purgeAfter();
    Duration window = ctx.options().dedupWindow();
    long cutoff = now - purgeAfter.toNanos();
    long total;
    try {
      if (window.compareTo(purgeAfter) <= 0 || !ctx.table().hasDedupKey()) {
        unkeyedFrom = Long.MIN_VALUE;
        total = batches(() -> ctx.maintenance().purge(cutoff, BATCH));
      } else {
        long keyedCutoff = now - window.toNanos();
        total = batches(() -> ctx.maintenance().purge(keyedCutoff, BATCH));
        long from = Math.max(keyedCutoff, unkeyedFrom);
        total += batches(() -> ctx.maintenance().purgeUnkeyed(from, cutoff, BATCH));
        unkeyedFrom = cutoff - UNKEYED_MARGIN_NS;
      }
    } catch (RuntimeException e) {
      ctx.metrics().dbErrors.increment();
      throw e;
    }
    if (total > 0) {
      ctx.metrics().purged.increment(total);
      log.debug("{}: purged {} settled events", ctx.where(), total);
    }
  }

  /** Runs {@code batch} until it deletes less than a full batch (or the purger stops). */
  private long batches(IntSupplier batch) {
    long total = 0;
    int n;
    do {
      n = batch.getAsInt();
      total += n;
    } while (n == BATCH && running);
    return total;
  }
}
