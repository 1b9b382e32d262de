package dev.sluice.core.queue;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.FireRef;
import dev.sluice.db.store.FireResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * one statement before its own. A group's ack deadline is taken when it is written, not when its
 * batches were made. A fire is one transaction ({@link
 * dev.sluice.db.store.EventStore#fireAsPolled}): a row another transaction holds locked is skipped,
 * not waited for; a row changed since the poll is not fired; the ack deadline this manager keeps is
 * taken after the commit; a row whose fire the database refuses is found and left out ({@link
 * FireSplitter}). Each batch's result (or the error) goes back to the dispatcher thread with {@link
 * Dispatcher#onFired}; only then are its events in flight and sent.
 */
final class Firer implements Runnable {
  private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(50);

  private final QueueContext ctx;
  private final Dispatcher dispatcher;
  private final LinkedBlockingQueue<Batch> queue = new LinkedBlockingQueue<>();
  private volatile boolean running = true;
  private volatile ShardGate gate = ShardGate.ALWAYS_OPEN;
  private final FireSplitter splitter;

  /**
   * Events taken from the window with an outlet's credit reserved for each, to be fired together.
   * Built and read on the dispatcher thread; the firer thread only sets {@link #outcome} or {@link
   * #error} before handing it back (the inbox's queue orders those writes before the reads).
   */
  static final class Batch {
    final List<CachedEvent> events;
    final List<AttachedOutlet> owners;
    final List<EventRef> refs;
    final long firedAtNs;

    /** The deadline as the dispatcher saw it when it made the batch (the firer takes its own). */
    final long deadlineNs;

    /** The ack deadline written: this batch's, or a later one of its group's. */
    long firedDeadlineNs;

    Map<EventRef, CasOutcome> outcome;

    /** Of this batch's events, the fired ones' columns as they were fired (wire form). */
    Map<Long, Map<String, Object>> columns = Map.of();

    /** Rows another transaction held locked: still pending, to be fired once free. */
    Set<Long> locked = Set.of();

    /** Rows rescheduled or changed since the poll: not fired, to be read again. */
    Set<Long> changed = Set.of();

    RuntimeException error;

    /** {@code events[i]} to be fired at the epoch it was read at, for {@code owners[i]}. */
    Batch(List<CachedEvent> events, List<AttachedOutlet> owners, long firedAtNs, long deadlineNs) {
      this.events = events;
      this.owners = owners;
      List<EventRef> refs = new ArrayList<>(events.size());
      for (CachedEvent e : events) {
        refs.add(new EventRef(e.id, e.epoch));
      }
      this.refs = refs;
      this.firedAtNs = firedAtNs;
      this.deadlineNs = deadlineNs;
    }
  }

  Firer(QueueContext ctx, Dispatcher dispatcher) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
    this.splitter = new FireSplitter(ctx, new BadRows(ctx));
  }

  /** The shard's gate, checked right before each fire; set before the threads start. */
  void gate(ShardGate g) {
    this.gate = g;
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
      try {
        FaultHook.check(FaultHook.FIRER, ctx.queue());
        Batch b = queue.poll(POLL_NS, TimeUnit.NANOSECONDS);
        if (b == null) {
          continue;
        }
        List<Batch> group = new ArrayList<>();
        group.add(b);
        queue.drainTo(group);
        fire(group);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Throwable t) { // fire() hands every batch back itself; this is the loop's own fault
        ctx.faults().caught(FaultHook.FIRER, t);
        if (!LoopFaults.pause(100)) {
          return;
        }
      }
    }
  }

  private void fire(List<Batch> group) {
    List<FireRef> refs = new ArrayList<>();
    for (Batch b : group) {
      for (CachedEvent e : b.events) {
        refs.add(new FireRef(e.id, e.epoch, e.dueNs));
      }
    }
    ctx.metrics().fireBatch.record(refs.size());
    long ackWaitNs = ctx.options().ackWait().toNanos();
    FireResult result = null;
    RuntimeException error = null;
    try {
      if (gate.open()) {
        // The deadline written is taken once the rows are locked, and the one this manager keeps
        // after the commit: time spent in the database never shortens a receiver's ack_wait.
        // A row the database refuses to fire is found by splitting the group, and left out.
        result = splitter.fire(refs, () -> Backoff.at(ctx.clock().nowNs(), ackWaitNs));
      } else {
        // The shard is no longer ours: nothing fired; the rows stay pending for the next leader.
        result = new FireResult(0, Map.of(), Set.of(), Set.of(), Set.of());
      }
    } catch (RuntimeException e) {
      error = e;
    } catch (Throwable t) { // an Error: the batches still go back, failed, so none is stranded
      ctx.faults().caught(FaultHook.FIRER, t);
      error = new IllegalStateException("fire failed: " + t, t);
    }
    long deadline = Backoff.at(ctx.clock().nowNs(), ackWaitNs);
    for (Batch b : group) {
      b.firedDeadlineNs = deadline;
      b.error = error;
      if (result != null) {
        Map<EventRef, CasOutcome> outcome = new HashMap<>();
        Map<Long, Map<String, Object>> columns = new HashMap<>();
        for (int i = 0; i < b.events.size(); i++) {
          EventRow row = result.fired().get(b.events.get(i).id);
          outcome.put(b.refs.get(i), row == null ? CasOutcome.STALE : CasOutcome.APPLIED);
          if (row != null) {
            columns.put(row.id(), row.userColumns());
          }
        }
        b.outcome = outcome;
        b.columns = columns;
        b.locked = result.locked();
        b.changed = result.changed();
      }
      dispatcher.post(() -> dispatcher.onFired(b));
    }
  }
}
