package dev.sluice.core.queue.write;

import dev.sluice.core.loop.Backoff;
import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.loop.LoopRunner;
import dev.sluice.core.loop.ShardGate;
import dev.sluice.core.queue.context.BadRows;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.dispatch.DispatcherCommand;
import dev.sluice.core.queue.dispatch.FireBatch;
import dev.sluice.core.queue.dispatch.Inbox;
import dev.sluice.db.store.FireRef;
import dev.sluice.db.store.FireResult;
import java.util.ArrayList;
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
 * <p>The dispatcher keeps at most a few batches here ({@code MAX_FIRING_BATCHES}). Batches that
 * queued up while the last UPDATE ran are fired together, as a group commit: when receivers free
 * credits one at a time, the dispatcher hands over many small batches, and each waits for at most
 * one statement before its own. A group's ack deadline is taken when it is written, not when its
 * batches were made. A fire is one transaction ({@link
 * dev.sluice.db.store.EventStore#fireAsPolled}): a row another transaction holds locked is skipped,
 * not waited for; a row changed since the poll is not fired; the ack deadline this manager keeps is
 * taken after the commit; a row whose fire the database refuses is found and left out ({@link
 * FireSplitter}). Each batch's result (or the error) goes back to the dispatcher's inbox as a
 * {@link DispatcherCommand.Fired}; only then are its events in flight and sent.
 */
public final class Firer implements Runnable {
  private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(50);

  private final QueueContext ctx;

  /** Where each batch goes back: the dispatcher's inbox. */
  private final Inbox dispatcher;

  private final LinkedBlockingQueue<FireBatch> queue = new LinkedBlockingQueue<>();
  private volatile boolean running = true;
  private volatile ShardGate gate = ShardGate.ALWAYS_OPEN;
  private final FireSplitter splitter;

  public Firer(QueueContext ctx, Inbox dispatcher) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
    this.splitter = new FireSplitter(ctx, new BadRows(ctx));
  }

  /** The shard's gate, checked right before each fire; set before the threads start. */
  public void gate(ShardGate g) {
    this.gate = g;
  }

  public void submit(FireBatch b) {
    queue.add(b);
  }

  /** Stops after the batches queued now have been fired (or failed). */
  public void stop() {
    running = false;
  }

  @Override
  public void run() {
    // fire() hands every batch back itself; what the runner catches is the loop's own fault.
    new LoopRunner(ctx.faults(), FaultHook.FIRER)
        .run(() -> running || !queue.isEmpty(), this::pass);
  }

  private void pass() throws InterruptedException {
    FaultHook.check(FaultHook.FIRER, ctx.queue());
    FireBatch b = queue.poll(POLL_NS, TimeUnit.NANOSECONDS);
    if (b == null) {
      return;
    }
    List<FireBatch> group = new ArrayList<>();
    group.add(b);
    queue.drainTo(group);
    fire(group);
  }

  /** Fires {@code group} and hands each batch back (a firer thread; tests drive it). */
  public void fire(List<FireBatch> group) {
    List<FireRef> refs = new ArrayList<>();
    for (FireBatch b : group) {
      refs.addAll(b.fireRefs());
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
    for (FireBatch b : group) {
      b.answered(deadline, result, error);
      dispatcher.post(new DispatcherCommand.Fired(b));
    }
  }
}
