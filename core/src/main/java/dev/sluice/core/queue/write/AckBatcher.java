package dev.sluice.core.queue.write;

import dev.sluice.core.loop.Backoff;
import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.loop.LoopRunner;
import dev.sluice.core.outlet.Settled;
import dev.sluice.core.queue.context.BadRows;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.context.QueueMetrics;
import dev.sluice.core.queue.dispatch.AttachedOutlet;
import dev.sluice.core.queue.dispatch.Completion;
import dev.sluice.core.queue.dispatch.DispatcherCommand;
import dev.sluice.core.queue.dispatch.Inbox;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.DispatchStore;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.Release;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
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
 * dispatcher (to free the in-flight entry) and to the outlet the ack came from ({@link
 * dev.sluice.core.outlet.Outlet#settled}).
 *
 * <p>A failed write is retried with backoff while the manager runs: nothing here is lost, because
 * until a change applies the row stays fired and comes back through its deadline. A write that
 * fails in a way that may concern some of its rows ({@link WriteFaults}: a trigger, a constraint, a
 * lock held too long) is split in halves, and each half written on its own, until the one row that
 * fails is found; the others are written and answered at once, and that row is retried on its own
 * ({@link StuckRows}) and, if it keeps failing, made dead with the database's error as its reason.
 * A failure of the database as a whole (connection lost, read-only, lease lost) retries the whole
 * part as before and never makes a row dead.
 */
public final class AckBatcher implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(AckBatcher.class);
  static final int MAX_BATCH = 1000;

  /** The least time between the starts of two writes. */
  static final long MIN_WRITE_GAP_NS = TimeUnit.MILLISECONDS.toNanos(2);

  /** When the last write started (monotonic ns; the batcher's thread only). */
  private long lastWriteMono = Long.MIN_VALUE / 2;

  private final QueueContext ctx;

  /** Where the database's answers go: the dispatcher's inbox. */
  private final Inbox dispatcher;

  private final LinkedBlockingQueue<Completion> queue = new LinkedBlockingQueue<>();
  private final StuckRows stuck;
  private final BadRows badRows;
  private volatile boolean running = true;

  public AckBatcher(QueueContext ctx, Inbox dispatcher) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
    this.badRows = new BadRows(ctx);
    this.stuck = new StuckRows(ctx.clock().ticker());
  }

  public void submit(Completion c) {
    queue.add(c);
  }

  int pending() {
    return queue.size();
  }

  /** Stops after what is queued now has been written (or could not be). */
  public void stop() {
    running = false;
  }

  @Override
  public void run() {
    // A pass that fails (an Error too): what its batch held comes back after its deadline.
    new LoopRunner(ctx.faults(), FaultHook.ACKS).run(() -> running || !queue.isEmpty(), this::pass);
    if (stuck.size() > 0) {
      log.warn(
          "{}: {} acks/releases that failed on their own rows not written at shutdown; their"
              + " events come back after their ack deadline",
          ctx.where(),
          stuck.size());
    }
  }

  private void pass() throws InterruptedException {
    FaultHook.check(FaultHook.ACKS, ctx.queue());
    retryStuck();
    Completion first = queue.poll(100, TimeUnit.MILLISECONDS);
    if (first == null) {
      return;
    }
    long wait = lastWriteMono + MIN_WRITE_GAP_NS - ctx.clock().monoNs();
    if (wait > 0) {
      LockSupport.parkNanos(wait);
    }
    List<Completion> batch = new ArrayList<>();
    batch.add(first);
    queue.drainTo(batch, MAX_BATCH - 1);
    lastWriteMono = ctx.clock().monoNs();
    ctx.metrics().ackBatch.record(batch.size());
    write(List.copyOf(batch));
  }

  /** Writes {@code batch} and answers for it (the batcher's thread; tests drive it). */
  public void write(List<Completion> batch) throws InterruptedException {
    List<Completion> acks = new ArrayList<>();
    List<Completion> releases = new ArrayList<>();
    for (Completion c : batch) {
      (c.kind() == Completion.Kind.ACK ? acks : releases).add(c);
    }
    // Parts still to write, each all acks or all releases; a part that fails for some of its rows
    // is replaced by its two halves, until the row is found.
    Deque<List<Completion>> todo = new ArrayDeque<>();
    if (!releases.isEmpty()) {
      todo.push(releases);
    }
    if (!acks.isEmpty()) {
      todo.push(acks);
    }
    List<Completion> done = new ArrayList<>(batch.size());
    List<CasOutcome> outcomes = new ArrayList<>(batch.size());
    int tries = 0;
    while (!todo.isEmpty()) {
      List<Completion> part = todo.peek();
      DispatchStore store = ctx.dispatch();
      try {
        Map<EventRef, CasOutcome> out = apply(part, store);
        todo.pop();
        for (Completion c : part) {
          done.add(c);
          outcomes.add(out.get(c.ref()));
        }
      } catch (RuntimeException e) {
        ctx.metrics().dbErrors.increment();
        // A store handed over meanwhile (a leader's fenced store refused, the unfenced one now):
        // worth one more try, even when stopping.
        if (!running && store == ctx.dispatch()) {
          log.warn(
              "{}: {} acks/releases not written at shutdown ({}); their events come back after their ack deadline",
              ctx.where(),
              batch.size() - done.size(),
              e.toString());
          break;
        }
        if (WriteFaults.mayConcernRows(e)) {
          todo.pop();
          if (part.size() == 1) {
            stuckAlone(part.get(0), e);
          } else {
            int half = part.size() / 2;
            todo.push(part.subList(half, part.size()));
            todo.push(part.subList(0, half));
            log.debug(
                "{}: writing {} acks/releases failed, splitting: {}",
                ctx.where(),
                part.size(),
                e.toString());
          }
          continue;
        }
        long pauseNs = Backoff.DB_RETRY.delayNs(++tries);
        log.warn(
            "{}: writing {} acks/releases failed, retrying in {} ms: {}",
            ctx.where(),
            part.size(),
            TimeUnit.NANOSECONDS.toMillis(pauseNs),
            e.toString());
        TimeUnit.NANOSECONDS.sleep(pauseNs);
      }
    }
    answer(done, outcomes);
  }

  /** Writes {@code part}, all acks or all releases, and returns each one's outcome. */
  private Map<EventRef, CasOutcome> apply(List<Completion> part, DispatchStore store) {
    if (part.get(0).kind() == Completion.Kind.ACK) {
      List<EventRef> refs = new ArrayList<>(part.size());
      part.forEach(c -> refs.add(c.ref()));
      return store.ack(refs, ctx.clock().nowNs());
    }
    List<Release> releases = new ArrayList<>(part.size());
    part.forEach(c -> releases.add(c.release()));
    return store.release(releases);
  }

  /** {@code c}'s write failed on its own: it is tried again later, alone. */
  private void stuckAlone(Completion c, RuntimeException e) {
    log.warn(
        "{}: event {} epoch {}: its {} cannot be written ({}); the others go on, it is retried"
            + " alone",
        ctx.where(),
        c.ref().id(),
        c.ref().epoch(),
        what(c),
        WriteFaults.message(e));
    stuck.add(c, WriteFaults.message(e), ctx.retry().backoff());
  }

  private static String what(Completion c) {
    return c.kind() == Completion.Kind.ACK ? "ack" : "release";
  }

  /**
   * Tries each stuck row that is due again, alone. One that still fails for itself is given up
   * after {@link StuckRows#MAX_TRIES}: reported, and made dead with the database's error when its
   * state can still be changed (else left as it is, to come back through its deadline).
   */
  private void retryStuck() {
    if (stuck.size() == 0) {
      return;
    }
    for (StuckRows.Stuck s : stuck.takeDue()) {
      Completion c = s.completion;
      try {
        Map<EventRef, CasOutcome> out = apply(List.of(c), ctx.dispatch());
        answer(List.of(c), List.of(out.get(c.ref())));
        continue;
      } catch (RuntimeException e) {
        ctx.metrics().dbErrors.increment();
        if (!WriteFaults.mayConcernRows(e)) {
          stuck.later(s, ctx.retry().backoff().delayNs(s.tries)); // the database, not the row
          continue;
        }
        if (!stuck.failed(s, WriteFaults.message(e), ctx.retry().backoff())) {
          continue;
        }
      }
      giveUp(c, s.error);
    }
  }

  private void giveUp(Completion c, String error) {
    String reason =
        "its " + what(c) + " could not be written in " + StuckRows.MAX_TRIES + " tries: " + error;
    CasOutcome o;
    try {
      o = ctx.dispatch().markDead(Map.of(c.ref(), reason)).get(c.ref());
    } catch (RuntimeException e) {
      ctx.metrics().dbErrors.increment();
      o = null;
      reason += "; making it dead failed too (" + WriteFaults.message(e) + ")";
    }
    boolean dead = o == CasOutcome.APPLIED;
    badRows.badRow(
        c.ref().id(),
        "write_refused",
        "epoch "
            + c.ref().epoch()
            + ": "
            + reason
            + (dead ? "; made dead" : "; left as it is (it comes back after its ack deadline)"));
    if (dead) {
      ctx.metrics().dead.increment();
      ctx.groups().settled(ctx.table(), List.of(c.ref().id()));
    }
    List<CasOutcome> outcome = List.of(o == null ? CasOutcome.STALE : o);
    dispatcher.post(new DispatcherCommand.Settled(List.of(c), outcome));
    if (c.from() != null) {
      c.from()
          .outlet()
          .settled(
              ctx.shard(),
              List.of(new Settled(c.ref(), outcome.get(0), dead ? Settled.Result.DEAD : null)));
    }
  }

  /** Counts each written change and answers the dispatcher and the outlets that asked. */
  private void answer(List<Completion> batch, List<CasOutcome> outcomes) {
    if (batch.isEmpty()) {
      return;
    }
    Map<AttachedOutlet, List<Settled>> answers = new LinkedHashMap<>();
    for (int i = 0; i < batch.size(); i++) {
      Completion c = batch.get(i);
      boolean ack = c.kind() == Completion.Kind.ACK;
      CasOutcome o = outcomes.get(i);
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
    // The dispatcher tells the group closer of the children of event groups that ended here.
    dispatcher.post(new DispatcherCommand.Settled(batch, outcomes));
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
