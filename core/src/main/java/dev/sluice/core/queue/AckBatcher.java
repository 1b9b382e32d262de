package dev.sluice.core.queue;

import dev.sluice.core.outlet.Settled;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.Release;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes acks and releases to the database in batches, on its own thread ({@code
 * sluice-<shard>-<queue>-acks}), so that the dispatcher never waits for them.
 *
 * <p>Batching: the thread takes whatever has queued up since its last write (up to {@link
 * #MAX_BATCH}), and writes at most once every {@link #MIN_WRITE_GAP_NS}. A lone ack is written at
 * once; under a stream of acks each write takes all that came in the gap — a few UPDATEs a second
 * instead of one per ack, and as many fewer commits for the database to flush, which every other
 * writer (the applications' inserts, the fires) waits on. Nothing waits on these writes: the
 * dispatcher frees an acked event's credit when the ack arrives. Each result goes back to the
 * dispatcher (to free the in-flight entry) and to the receiver that asked (an {@code AckResults}
 * message).
 *
 * <p>A failed write is retried with backoff while the manager runs: nothing here is lost, because
 * until a change applies the row stays fired and comes back through its deadline.
 */
final class AckBatcher implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(AckBatcher.class);
  static final int MAX_BATCH = 1000;

  /** The least time between the starts of two writes. */
  static final long MIN_WRITE_GAP_NS = TimeUnit.MILLISECONDS.toNanos(2);

  /** When the last write started (System.nanoTime; the batcher's thread only). */
  private long lastWriteMono = Long.MIN_VALUE / 2;

  private final QueueContext ctx;
  private final Dispatcher dispatcher;
  private final LinkedBlockingQueue<Completion> queue = new LinkedBlockingQueue<>();
  private volatile boolean running = true;

  AckBatcher(QueueContext ctx, Dispatcher dispatcher) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
  }

  void submit(Completion c) {
    queue.add(c);
  }

  int pending() {
    return queue.size();
  }

  /** Stops after what is queued now has been written (or could not be). */
  void stop() {
    running = false;
  }

  @Override
  public void run() {
    List<Completion> batch = new ArrayList<>();
    while (running || !queue.isEmpty()) {
      try {
        FaultHook.check(FaultHook.ACKS, ctx.queue());
        Completion first = queue.poll(100, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        long wait = lastWriteMono + MIN_WRITE_GAP_NS - System.nanoTime();
        if (wait > 0) {
          LockSupport.parkNanos(wait);
        }
        batch.clear();
        batch.add(first);
        queue.drainTo(batch, MAX_BATCH - 1);
        lastWriteMono = System.nanoTime();
        ctx.metrics().ackBatch.record(batch.size());
        write(List.copyOf(batch));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (Throwable t) { // an Error too; what the batch held comes back after its deadline
        ctx.faults().caught(FaultHook.ACKS, t);
        if (!LoopFaults.pause(100)) {
          break;
        }
      }
    }
  }

  private void write(List<Completion> batch) throws InterruptedException {
    List<EventRef> acks = new ArrayList<>();
    List<Release> releases = new ArrayList<>();
    for (Completion c : batch) {
      if (c.kind() == Completion.Kind.ACK) {
        acks.add(c.ref());
      } else {
        releases.add(c.release());
      }
    }
    Map<EventRef, CasOutcome> ackOut = null;
    Map<EventRef, CasOutcome> relOut = null;
    long pauseMs = 50;
    while (true) {
      EventStore store = ctx.store();
      try {
        if (ackOut == null) {
          ackOut = acks.isEmpty() ? Map.of() : store.ack(acks, ctx.clock().nowNs());
        }
        if (relOut == null) {
          relOut = releases.isEmpty() ? Map.of() : store.release(releases);
        }
        break;
      } catch (RuntimeException e) {
        ctx.metrics().dbErrors.increment();
        // A store handed over meanwhile (a leader's fenced store refused, the unfenced one now):
        // worth one more try, even when stopping.
        if (!running && store == ctx.store()) {
          log.warn(
              "{}: {} acks/releases not written at shutdown ({}); their events come back after their ack deadline",
              ctx.where(),
              batch.size(),
              e.toString());
          return;
        }
        log.warn(
            "{}: writing {} acks/releases failed, retrying in {} ms: {}",
            ctx.where(),
            batch.size(),
            pauseMs,
            e.toString());
        Thread.sleep(pauseMs);
        pauseMs = Math.min(2_000, pauseMs * 2);
      }
    }
    List<CasOutcome> outcomes = new ArrayList<>(batch.size());
    Map<AttachedOutlet, List<Settled>> answers = new LinkedHashMap<>();
    for (Completion c : batch) {
      boolean ack = c.kind() == Completion.Kind.ACK;
      CasOutcome o = (ack ? ackOut : relOut).get(c.ref());
      outcomes.add(o);
      count(c, o);
      if (c.from() != null) {
        Settled.Result result =
            o != CasOutcome.APPLIED
                ? null
                : ack
                    ? Settled.Result.ACKED
                    : c.dead() ? Settled.Result.DEAD : Settled.Result.RETRY;
        answers
            .computeIfAbsent(c.from(), k -> new ArrayList<>())
            .add(new Settled(c.ref(), o, result));
      }
    }
    dispatcher.post(() -> dispatcher.onSettled(batch, outcomes));
    answers.forEach((r, results) -> r.outlet().settled(ctx.shard(), results));
  }

  private void count(Completion c, CasOutcome o) {
    QueueMetrics m = ctx.metrics();
    if (o != CasOutcome.APPLIED) {
      if (c.kind() == Completion.Kind.ACK) {
        m.staleAcks.increment();
        log.debug(
            "{}: ack of event {} epoch {} refused: {}",
            ctx.where(),
            c.ref().id(),
            c.ref().epoch(),
            o);
      }
      return;
    }
    if (c.kind() == Completion.Kind.ACK) {
      m.acked.increment();
    } else if (c.dead()) {
      m.dead.increment();
      log.warn(
          "{}: event {} is dead after {} attempts ({})",
          ctx.where(),
          c.ref().id(),
          c.ref().epoch(),
          c.reason());
    } else {
      m.retried.increment();
      if (c.from() == null) {
        m.released.increment();
      }
    }
  }
}
