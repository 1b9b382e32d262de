package dev.sluice.core.shard;

import dev.sluice.core.loop.Backoff;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletOutcomes;
import dev.sluice.core.outlet.Settled;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.queue.context.RetryPolicy;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.DispatchStore;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.Release;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Outlets' outcomes routed to the shard their events came from: to the queue's manager when this
 * process dispatches the queue there, else written straight to the table through the CAS, on the
 * shard's {@code sluice-<shard>-direct-acks} thread (one per shard, made on first use).
 */
public final class DirectAcks {
  private static final Logger log = LoggerFactory.getLogger(DirectAcks.class);

  /** Per shard: the thread applying acks for shards this process does not lead. */
  private final Map<String, ScheduledExecutorService> directWriters = new ConcurrentHashMap<>();

  /** The process stops: pending direct writes are dropped (receivers send them again). */
  public void stop() {
    directWriters.values().forEach(ScheduledExecutorService::shutdownNow);
  }

  /**
   * Applies outcomes on the shard the events came from. Direct writes (the queue is not dispatched
   * here) run on the shard's own {@code sluice-<shard>-direct-acks} thread, never on the caller's,
   * and one that fails (the database is down) is retried with backoff until it applies or the
   * outlet closes — it never fails the outlet, which would release everything it holds from every
   * shard of this process. Results go to the outlet once applied.
   */
  public void route(
      ShardManager s,
      Outlet from,
      String queue,
      String shardName,
      List<EventRef> acks,
      List<Nack> nacks,
      List<EventRef> releases,
      String why) {
    if (s == null) {
      answerUnknown(from, shardName, acks, nacks, releases);
      return;
    }
    QueueManager q = s.queue(queue);
    if (q != null) {
      OutletOutcomes o = q.outcomes();
      if (!acks.isEmpty()) {
        o.acked(from, acks);
      }
      if (!nacks.isEmpty()) {
        o.nacked(from, nacks);
      }
      if (!releases.isEmpty()) {
        o.released(from, releases, why);
      }
      return;
    }
    DispatchStore store = s.directStore(queue);
    if (store == null) {
      answerUnknown(from, s.name(), acks, nacks, releases);
      return;
    }
    direct(s).execute(() -> applyDirect(from, queue, s, store, acks, nacks, releases, 0));
  }

  /**
   * The shard's {@code sluice-<shard>-direct-acks} thread, for other receivers' writes that must
   * not run on a gRPC thread ({@link Extensions}).
   */
  ScheduledExecutorService writer(ShardManager s) {
    return direct(s);
  }

  private ScheduledExecutorService direct(ShardManager s) {
    return directWriters.computeIfAbsent(
        s.name(),
        n ->
            Executors.newSingleThreadScheduledExecutor(
                r -> {
                  Thread t = new Thread(r, "sluice-" + n + "-direct-acks");
                  t.setDaemon(true);
                  return t;
                }));
  }

  private void applyDirect(
      Outlet from,
      String queue,
      ShardManager s,
      DispatchStore store,
      List<EventRef> acks,
      List<Nack> nacks,
      List<EventRef> releases,
      int failures) {
    if (from.closed()) {
      return; // a receiver sends them again on its next stream; a channel's events time out
    }
    List<Settled> results = new ArrayList<>();
    try {
      s.clock().sync(store::serverTimeNs);
      long now = s.clock().nowNs();
      if (!acks.isEmpty()) {
        Map<EventRef, CasOutcome> out = store.ack(acks, now);
        acks.forEach(r -> results.add(settled(r, out.get(r), Settled.Result.ACKED)));
      }
      List<Release> rel = new ArrayList<>();
      if (!nacks.isEmpty()) {
        RetryPolicy policy = RetryPolicy.of(s.table(queue).options());
        for (Nack n : nacks) {
          String why = n.why();
          rel.add(
              n.snooze()
                  ? policy.snoozed(n.ref(), now, n.retryAfterNs(), why)
                  : policy.afterFailure(n.ref(), now, n.retryAfterNs(), why));
        }
      }
      for (EventRef r : releases) {
        rel.add(RetryPolicy.released(r, now));
      }
      if (!rel.isEmpty()) {
        Map<EventRef, CasOutcome> out = store.release(rel);
        rel.forEach(
            r ->
                results.add(
                    settled(
                        r.ref(),
                        out.get(r.ref()),
                        r.dead() ? Settled.Result.DEAD : Settled.Result.RETRY)));
      }
    } catch (RuntimeException e) {
      // A release that half applied is harmless to redo: each row is a CAS on its epoch, and a
      // row already changed answers STALE.
      long pauseMs = TimeUnit.NANOSECONDS.toMillis(Backoff.DB_RETRY.delayNs(failures + 1));
      log.warn(
          "shard {}: applying {} acks, {} nacks and {} releases of {} on queue {} directly failed"
              + " ({} in a row), retrying in {} ms: {}",
          s.name(),
          acks.size(),
          nacks.size(),
          releases.size(),
          from,
          queue,
          failures + 1,
          pauseMs,
          e.toString());
      try {
        direct(s)
            .schedule(
                () -> applyDirect(from, queue, s, store, acks, nacks, releases, failures + 1),
                pauseMs,
                TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException stopping) {
        // The manager is stopping: the receiver sends them again to whoever serves next.
      }
      return;
    }
    from.settled(s.name(), results);
  }

  private static Settled settled(EventRef r, CasOutcome o, Settled.Result ifApplied) {
    CasOutcome outcome = o == null ? CasOutcome.UNKNOWN : o;
    return new Settled(r, outcome, outcome == CasOutcome.APPLIED ? ifApplied : null);
  }

  private static void answerUnknown(
      Outlet from, String shard, List<EventRef> acks, List<Nack> nacks, List<EventRef> releases) {
    List<Settled> results = new ArrayList<>();
    acks.forEach(r -> results.add(settled(r, CasOutcome.UNKNOWN, null)));
    nacks.forEach(n -> results.add(settled(n.ref(), CasOutcome.UNKNOWN, null)));
    releases.forEach(r -> results.add(settled(r, CasOutcome.UNKNOWN, null)));
    from.settled(shard, results);
  }
}
