package dev.sluice.core.queue.poll;

import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.dispatch.DispatcherCommand;
import dev.sluice.core.queue.dispatch.Inbox;
import dev.sluice.db.store.EventRef;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds fired rows whose ack deadline passed with no live owner — left by a manager that crashed or
 * lost its shard — and has them returned to pending (or dead) through the usual CAS. Events this
 * manager holds are skipped: their own deadline handles them. Runs on the poller's thread.
 *
 * <p>How often it looks follows the queue's current ack_wait ({@link QueueContext#options()}), so
 * an in-place {@code ALTER} of ack_wait takes effect at the next pass.
 */
public final class RetryCollector {
  static final int BATCH = 500;

  private final QueueContext ctx;

  /** Where the orphans found go: the dispatcher's inbox. */
  private final Inbox dispatcher;

  public RetryCollector(QueueContext ctx, Inbox dispatcher) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
  }

  /** Half of the current ack_wait, from 100 ms to 1 s. */
  long intervalNs() {
    long half = ctx.options().ackWait().toNanos() / 2;
    return Math.max(
        TimeUnit.MILLISECONDS.toNanos(100), Math.min(TimeUnit.SECONDS.toNanos(1), half));
  }

  void scan() {
    List<EventRef> expired = ctx.dispatch().expiredFired(ctx.clock().nowNs(), BATCH);
    if (!expired.isEmpty()) {
      dispatcher.post(new DispatcherCommand.Orphans(expired));
    }
  }
}
