package dev.sluice.manager.queue;

import dev.sluice.db.store.EventRow;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads pending events into the window, on its own thread ({@code sluice-<shard>-<queue>-poller}).
 *
 * <p>Each round: re-measure the database clock (at most once a second), then — if the window has
 * room — read the oldest pending events due within the look-ahead (the index on (state, time_next)
 * serves it), and hand them to the dispatcher. It polls every {@code poll_interval}, and at once
 * when the dispatcher says the window drained while the last poll came back full. The {@link
 * RetryCollector} runs on this thread too.
 *
 * <p>Errors (database down, say) are logged, counted, and retried with growing pauses; the loop
 * never dies.
 */
final class Poller implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Poller.class);
  private static final long SYNC_EVERY_NS = TimeUnit.SECONDS.toNanos(1);

  private final QueueContext ctx;
  private final Dispatcher dispatcher;
  private final RetryCollector collector;
  private final Waiter waiter = new Waiter();
  private final long intervalNs;
  private final long lookaheadNs;
  private final int limit;
  private volatile boolean running = true;
  private long lastSync = Long.MIN_VALUE / 2;
  private long lastCollect = Long.MIN_VALUE / 2;
  private int failures;

  Poller(QueueContext ctx, Dispatcher dispatcher, RetryCollector collector) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
    this.collector = collector;
    this.intervalNs = ctx.options().pollInterval().toNanos();
    this.lookaheadNs = 2 * intervalNs;
    this.limit = ctx.options().cacheSize();
  }

  void wake() {
    waiter.wake();
  }

  void stop() {
    running = false;
    waiter.wake();
  }

  @Override
  public void run() {
    while (running) {
      try {
        pollOnce();
        failures = 0;
        waiter.await(intervalNs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        failures++;
        ctx.metrics().dbErrors.increment();
        long pauseMs = Math.min(5_000, 100L << Math.min(failures, 6));
        log.warn(
            "{}: poll failed ({} in a row), retrying in {} ms: {}",
            ctx.where(),
            failures,
            pauseMs,
            e.toString());
        try {
          waiter.await(TimeUnit.MILLISECONDS.toNanos(pauseMs));
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** One round; package-visible so tests can drive it. */
  void pollOnce() {
    long mono = System.nanoTime();
    if (mono - lastSync >= SYNC_EVERY_NS || !ctx.clock().synced()) {
      ctx.clock().sync(ctx.store()::serverTimeNs);
      lastSync = mono;
    }
    if (dispatcher.cacheRoom() > 0) {
      long seq = dispatcher.settledSeq();
      long t0 = System.nanoTime();
      List<EventRow> rows = ctx.store().pollPending(ctx.clock().nowNs() + lookaheadNs, limit);
      ctx.metrics().pollDuration.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
      boolean full = rows.size() >= limit;
      if (!rows.isEmpty()) {
        dispatcher.post(() -> dispatcher.onPolled(rows, seq, full));
      }
    }
    if (mono - lastCollect >= collector.intervalNs()) {
      collector.scan();
      lastCollect = mono;
    }
  }
}
