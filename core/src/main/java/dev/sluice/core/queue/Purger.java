package dev.sluice.core.queue;

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

  Purger(QueueContext ctx) {
    this.ctx = ctx;
    this.runner = new LoopRunner(ctx.faults(), FaultHook.PURGER);
  }

  /** Runs every tenth of purge_after (between 1 s and 1 min) on {@code maintenance}. */
  void start(ScheduledExecutorService maintenance) {
    long purgeEvery = Math.max(1_000, Math.min(60_000, ctx.options().purgeAfter().toMillis() / 10));
    task = maintenance.scheduleWithFixedDelay(this, purgeEvery, purgeEvery, TimeUnit.MILLISECONDS);
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
      runner.once(this::pass); // counted and logged; the schedule runs it again at its next turn
    } catch (FaultHook.InjectedFault fatal) { // an Error would cancel the scheduled purge for good
      ctx.faults().handler(FaultHook.PURGER).uncaughtException(Thread.currentThread(), fatal);
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
