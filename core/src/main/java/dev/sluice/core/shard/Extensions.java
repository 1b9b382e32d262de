package dev.sluice.core.shard;

import dev.sluice.core.outlet.Extend;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.Extension;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receivers' deadline extensions, applied on the shard the events came from, whichever manager
 * receives them: the row is the truth, so a new leader after a failover honours an extension its
 * predecessor wrote, and answers one itself when the receiver's stream now leads to it.
 *
 * <p>Each extension asks for {@code now + by} on the database's clock, bounded by the attempt's
 * fire plus the queue's max_hold (LIMIT when that cut it). When this process leads the queue on the
 * shard, its dispatcher first moves the attempt's in-memory deadline ({@link
 * QueueManager#extended}; it bounds it by the fire time it recorded itself, so a receiver cannot
 * claim a later fire to hold longer); then the compare-and-set is written ({@link
 * dev.sluice.db.store.DispatchStore#extend}, one statement per event) on the shard's direct-acks
 * thread, never on the caller's (a gRPC thread), and the answers complete the returned future.
 */
public final class Extensions {
  private static final Logger log = LoggerFactory.getLogger(Extensions.class);

  private final DirectAcks direct;
  private final MeterRegistry registry;

  /**
   * @param registry where {@code sluice_events_extended_total{shard,queue,outcome}} counts the
   *     answers (ok, stale, unknown, limit)
   */
  public Extensions(DirectAcks direct, MeterRegistry registry) {
    this.direct = direct;
    this.registry = registry;
  }

  /** Applies {@code asks} for {@code queue} on shard {@code s} (null: unknown shard). */
  public CompletableFuture<List<Extend.Answer>> extend(
      ShardManager s, String queue, List<Extend> asks) {
    EventStore store = s == null ? null : s.directStore(queue);
    if (store == null) {
      return CompletableFuture.completedFuture(all(asks, Extend.Status.UNKNOWN));
    }
    // With the shard's clock measured (as soon as it serves), the plan is made here, on the
    // caller's thread, so that the leader's timeouts move before the write waits for its thread.
    Plan early = s.clock().synced() ? plan(s, queue, asks) : null;
    CompletableFuture<List<Extend.Answer>> out = new CompletableFuture<>();
    try {
      direct
          .writer(s)
          .execute(
              () -> {
                try {
                  List<Extend.Answer> answers = apply(s, queue, store, asks, early);
                  count(s.name(), queue, answers);
                  out.complete(answers);
                } catch (RuntimeException e) {
                  log.warn(
                      "shard {} queue {}: {} deadline extensions not written: {}",
                      s.name(),
                      queue,
                      asks.size(),
                      e.toString());
                  out.completeExceptionally(e);
                }
              });
    } catch (RejectedExecutionException e) {
      out.completeExceptionally(e); // the process is stopping
    }
    return out;
  }

  /** The asks as deadlines at {@code now}, each bounded by its fire + max_hold. */
  private record Plan(Map<EventRef, Extension> planned, Map<EventRef, Boolean> limited) {}

  private static Plan plan(ShardManager s, String queue, List<Extend> asks) {
    long now = s.clock().nowNs();
    long maxHoldNs = s.table(queue).options().maxHold().toNanos();
    Map<EventRef, Extension> planned = new LinkedHashMap<>();
    Map<EventRef, Boolean> limited = new LinkedHashMap<>();
    for (Extend a : asks) {
      long firedAt = Math.min(Math.max(0, a.firedAtNs()), now);
      long limit = firedAt + maxHoldNs;
      long want = now + Math.max(0, a.byNs());
      planned.put(a.ref(), new Extension(a.ref(), Math.min(want, limit)));
      limited.put(a.ref(), want > limit);
    }
    QueueManager q = s.queue(queue);
    if (q != null) {
      // The leader's own timeouts move at once, before the write waits its turn on the thread.
      Map<EventRef, Long> deadlines = new LinkedHashMap<>();
      planned.forEach((ref, x) -> deadlines.put(ref, x.deadlineNs()));
      q.extended(deadlines, maxHoldNs);
    }
    return new Plan(planned, limited);
  }

  private static List<Extend.Answer> apply(
      ShardManager s, String queue, EventStore store, List<Extend> asks, Plan early) {
    Plan plan = early;
    if (plan == null) {
      s.clock().sync(store::serverTimeNs);
      plan = plan(s, queue, asks);
    }
    Map<EventRef, Extension> planned = plan.planned();
    Map<EventRef, Boolean> limited = plan.limited();
    Map<EventRef, Extension.Outcome> written = store.extend(planned.values());
    List<Extend.Answer> answers = new ArrayList<>(asks.size());
    for (Extend a : asks) {
      Extension.Outcome o = written.get(a.ref());
      Extend.Status st;
      if (o == null || o.cas() == CasOutcome.UNKNOWN) {
        st = Extend.Status.UNKNOWN;
      } else if (o.cas() == CasOutcome.STALE) {
        st = Extend.Status.STALE;
      } else {
        st =
            limited.get(a.ref()) && o.deadlineNs() <= planned.get(a.ref()).deadlineNs()
                ? Extend.Status.LIMIT
                : Extend.Status.OK;
      }
      answers.add(new Extend.Answer(a.ref(), st, o == null ? 0 : o.deadlineNs()));
    }
    return answers;
  }

  private void count(String shard, String queue, List<Extend.Answer> answers) {
    for (Extend.Answer a : answers) {
      registry
          .counter(
              "sluice.events.extended",
              "shard",
              shard,
              "queue",
              queue,
              "outcome",
              a.status().name().toLowerCase(java.util.Locale.ROOT))
          .increment();
    }
  }

  private static List<Extend.Answer> all(List<Extend> asks, Extend.Status st) {
    List<Extend.Answer> out = new ArrayList<>(asks.size());
    for (Extend a : asks) {
      out.add(new Extend.Answer(a.ref(), st, 0));
    }
    return out;
  }
}
