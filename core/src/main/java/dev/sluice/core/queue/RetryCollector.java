package dev.sluice.core.queue;

import dev.sluice.db.store.EventRef;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds fired rows whose ack deadline passed with no live owner — left by a manager that crashed or
 * lost its shard — and has them returned to pending (or dead) through the usual CAS. Events this
 * manager holds are skipped: their own deadline handles them. Runs on the poller's thread.
 */
final class RetryCollector {
  static final int BATCH = 500;

  private final QueueContext ctx;

  /** Where the orphans found go: the dispatcher's inbox. */
  private final Inbox dispatcher;

  private final long intervalNs;

  RetryCollector(QueueContext ctx, Inbox dispatcher) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
    long half = ctx.options().ackWait().toNanos() / 2;
    this.intervalNs =
        Math.max(TimeUnit.MILLISECONDS.toNanos(100), Math.min(TimeUnit.SECONDS.toNanos(1), half));
  }

  long intervalNs() {
    return intervalNs;
  }

  void scan() {
    List<EventRef> expired = ctx.store().expiredFired(ctx.clock().nowNs(), BATCH);
    if (!expired.isEmpty()) {
      dispatcher.post(new DispatcherCommand.Orphans(expired));
    }
  }
}
