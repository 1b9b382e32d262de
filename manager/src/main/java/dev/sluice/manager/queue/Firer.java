package dev.sluice.manager.queue;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Runs the dispatcher's fire UPDATEs off its thread, so that the dispatcher prepares and sends the
 * next batch while the database works on this one. Two threads ({@code
 * sluice-<shard>-<queue>-firer-1} and {@code -2}) take from one queue: a batch need not wait for
 * another's commit (InnoDB commits the two together), so a quiet tenant's single event is not held
 * behind a busy tenant's big batch. They share nothing but the queue.
 *
 * <p>The dispatcher keeps at most {@link Dispatcher#MAX_FIRING_BATCHES} batches here. Batches that
 * queued up while the last UPDATE ran are fired together, as a group commit: when receivers free
 * credits one at a time, the dispatcher hands over many small batches, and each waits for at most
 * one statement before its own. A group is fired with the latest of its batches' ack deadlines
 * (earlier batches get a few milliseconds more). Each batch's result (or the error) goes back to
 * the dispatcher thread with {@link Dispatcher#onFired}; only then are its events in flight and
 * sent.
 */
final class Firer implements Runnable {
  private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(50);

  private final QueueContext ctx;
  private final Dispatcher dispatcher;
  private final LinkedBlockingQueue<Batch> queue = new LinkedBlockingQueue<>();
  private volatile boolean running = true;

  /**
   * Events taken from the window with a receiver's credit reserved for each, to be fired together.
   * Built and read on the dispatcher thread; the firer thread only sets {@link #outcome} or {@link
   * #error} before handing it back (the inbox's queue orders those writes before the reads).
   */
  static final class Batch {
    final List<CachedEvent> events;
    final List<ReceiverStream> owners;
    final List<EventRef> refs;
    final long firedAtNs;
    final long deadlineNs;

    /** The ack deadline written: this batch's, or a later one of its group's. */
    long firedDeadlineNs;

    Map<EventRef, CasOutcome> outcome;
    RuntimeException error;

    Batch(
        List<CachedEvent> events,
        List<ReceiverStream> owners,
        List<EventRef> refs,
        long firedAtNs,
        long deadlineNs) {
      this.events = events;
      this.owners = owners;
      this.refs = refs;
      this.firedAtNs = firedAtNs;
      this.deadlineNs = deadlineNs;
    }
  }

  Firer(QueueContext ctx, Dispatcher dispatcher) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
  }

  void submit(Batch b) {
    queue.add(b);
  }

  /** Stops after the batches queued now have been fired (or failed). */
  void stop() {
    running = false;
  }

  @Override
  public void run() {
    while (running || !queue.isEmpty()) {
      FaultHook.check(FaultHook.FIRER, ctx.queue());
      Batch b;
      try {
        b = queue.poll(POLL_NS, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (b == null) {
        continue;
      }
      List<Batch> group = new ArrayList<>();
      group.add(b);
      queue.drainTo(group);
      fire(group);
    }
  }

  private void fire(List<Batch> group) {
    long deadline = Long.MIN_VALUE;
    List<EventRef> refs = new ArrayList<>();
    for (Batch b : group) {
      deadline = Math.max(deadline, b.deadlineNs);
      refs.addAll(b.refs);
    }
    ctx.metrics().fireBatch.record(refs.size());
    Map<EventRef, CasOutcome> outcome = null;
    RuntimeException error = null;
    try {
      outcome = ctx.store().fire(refs, deadline);
    } catch (RuntimeException e) {
      error = e;
    }
    for (Batch b : group) {
      b.firedDeadlineNs = deadline;
      b.outcome = outcome;
      b.error = error;
      dispatcher.post(() -> dispatcher.onFired(b));
    }
  }
}
