package dev.sluice.core.queue.dispatch;

import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.store.EventRef;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The events the {@link Dispatcher} took out of the window and has not yet seen settled: those
 * handed to the {@code Firer} (firing), those fired (in flight, by id, until the database has
 * settled them), and those whose row was locked at their fire (parked for {@link #PARK_NS}); and
 * the sequence of recent settles by which {@link WindowFeed#onPolled} tells a stale poll row.
 *
 * <p>Owned by the dispatcher thread: no locks. Only {@link #settledSeq} is read by other threads
 * (the poller, to stamp its polls).
 */
final class InFlightTable {
  /** How long an event whose row another transaction held locked stays out of the window. */
  static final long PARK_NS = TimeUnit.MILLISECONDS.toNanos(250);

  /**
   * Fired events by id, in the order their fires came back: deadline order (while ack_wait stays
   * the same), except that two groups fired at once may come back swapped, a few ms apart — {@link
   * #expired} stops at the first deadline not yet passed, so such an event expires at most that
   * much late. After ack_wait is shortened in place, events fired since expire at most the
   * difference late until those fired before it are settled: late, never early.
   */
  private final LinkedHashMap<Long, InFlight> inFlight = new LinkedHashMap<>();

  /** Ids of events handed to the firer and not yet back: neither in the window nor in flight. */
  private final Set<Long> firing = new HashSet<>();

  private int firingBatches;

  /**
   * Events whose row another transaction held locked at their fire, by id, in the order they were
   * parked (all for {@link #PARK_NS}): they go back to the window when that has passed. Kept out of
   * the window meanwhile so that a lock held for a minute does not cost a fire every round.
   */
  private final LinkedHashMap<Long, Parked> parked = new LinkedHashMap<>();

  private record Parked(CachedEvent event, long untilNs) {}

  /** Ids settled recently, with the settle sequence number; see {@link #settledSince}. */
  private final LinkedHashMap<Long, Long> recentlySettled = new LinkedHashMap<>();

  /** Events held elsewhere out of the window (a key at its limit: {@link KeyLimits#holds}). */
  private java.util.function.Predicate<Long> alsoHeld = id -> false;

  void alsoHolds(java.util.function.Predicate<Long> held) {
    this.alsoHeld = held;
  }

  /** Settles so far; written by the dispatcher thread only. */
  private volatile long settledSeq;

  // ------------------------------------------------------------------ firing

  /** A batch of events was handed to the firer. */
  void firing(List<CachedEvent> events) {
    for (CachedEvent e : events) {
      firing.add(e.boxedId);
    }
    firingBatches++;
  }

  /** A batch came back from the firer (fired or not). */
  void fireReturned(List<CachedEvent> events) {
    firingBatches--;
    for (CachedEvent e : events) {
      firing.remove(e.boxedId);
    }
  }

  int firingBatches() {
    return firingBatches;
  }

  /** Events firing or in flight (settling ones too): what max_concurrency counts. */
  int count() {
    return inFlight.size() + firing.size();
  }

  // ------------------------------------------------------------------ in flight

  /** {@code e}'s fire applied: it is in flight at the next epoch, held by {@code owner}. */
  InFlight fired(CachedEvent e, AttachedOutlet owner, long firedAtNs, long deadlineNs) {
    InFlight f = new InFlight(e, e.epoch + 1, owner, firedAtNs, deadlineNs);
    inFlight.put(e.boxedId, f);
    return f;
  }

  /** The event in flight at {@code ref}'s epoch, or null (unknown, or another attempt). */
  InFlight at(EventRef ref) {
    InFlight f = inFlight.get(ref.id());
    return f != null && f.epoch == ref.epoch() ? f : null;
  }

  boolean isInFlight(long id) {
    return inFlight.containsKey(id);
  }

  /**
   * A receiver extended attempt {@code ref}'s deadline to {@code deadlineNs}: it moves there, never
   * earlier and never past its fire + {@code maxHoldNs}, and to the end of the deadline order (an
   * extension shorter than ack_wait then expires late, never early). Nothing for another attempt or
   * one already settling.
   */
  void extend(EventRef ref, long deadlineNs, long maxHoldNs) {
    InFlight f = at(ref);
    if (f == null || f.settling) {
      return;
    }
    long d = Math.min(deadlineNs, f.firedAtNs + maxHoldNs);
    if (d > f.deadlineNs) {
      f.deadlineNs = d;
      inFlight.remove(f.event.boxedId);
      inFlight.put(f.event.boxedId, f);
    }
  }

  /** Events whose ack deadline passed at {@code now} and that are not settling yet. */
  List<InFlight> expired(long now) {
    List<InFlight> out = List.of();
    for (InFlight f : inFlight.values()) {
      if (f.deadlineNs > now) {
        break;
      }
      if (!f.settling) {
        out = out.isEmpty() ? new ArrayList<>() : out;
        out.add(f);
      }
    }
    return out;
  }

  /** Events in flight and not settling yet that match {@code which}, in fire order. */
  List<InFlight> unsettled(Predicate<InFlight> which) {
    List<InFlight> out = new ArrayList<>();
    for (InFlight f : inFlight.values()) {
      if (!f.settling && which.test(f)) {
        out.add(f);
      }
    }
    return out;
  }

  /** {@code f} is settled for good: it leaves the table, and polls begun before now skip it. */
  void settled(InFlight f) {
    Long id = f.event.boxedId;
    inFlight.remove(id);
    settledSeq++;
    recentlySettled.remove(id);
    recentlySettled.put(id, settledSeq);
  }

  // ------------------------------------------------------------------ parked

  /** Holds back an event whose row was locked by another transaction; see {@link #parked}. */
  void park(CachedEvent e, long now) {
    parked.put(e.boxedId, new Parked(e, now + PARK_NS));
  }

  /** The parked events whose time is up at {@code now}, in the order parked; they leave. */
  List<CachedEvent> unpark(long now) {
    List<CachedEvent> out = List.of();
    Iterator<Parked> it = parked.values().iterator();
    while (it.hasNext()) {
      Parked p = it.next();
      if (p.untilNs() > now) {
        break;
      }
      it.remove();
      out = out.isEmpty() ? new ArrayList<>() : out;
      out.add(p.event());
    }
    return out;
  }

  /** When the next parked event goes back to the window, or {@link Long#MAX_VALUE}. */
  long nextUnparkNs() {
    return parked.isEmpty() ? Long.MAX_VALUE : parked.values().iterator().next().untilNs();
  }

  int parkedCount() {
    return parked.size();
  }

  /** A cancelled event is no longer held back. */
  void cancel(long id) {
    parked.remove(id);
  }

  // ------------------------------------------------------------------ what polls may not bring

  /** Whether {@code id} was taken from the window and is not settled: firing, in flight, parked. */
  boolean holds(long id) {
    return holds(Long.valueOf(id));
  }

  /** The same, for an id already boxed. */
  boolean holds(Long id) {
    return inFlight.containsKey(id)
        || firing.contains(id)
        || parked.containsKey(id)
        || alsoHeld.test(id);
  }

  /**
   * Whether {@code id} was settled after settle number {@code seq}: a poll that began then may
   * still show it pending.
   */
  boolean settledSince(long id, long seq) {
    return settledSince(Long.valueOf(id), seq);
  }

  /** The same, for an id already boxed. */
  boolean settledSince(Long id, long seq) {
    Long at = recentlySettled.get(id);
    return at != null && at > seq;
  }

  /**
   * Later polls start at or after settle number {@code seq}: older entries can no longer matter.
   */
  void forgetSettledUpTo(long seq) {
    Iterator<Map.Entry<Long, Long>> it = recentlySettled.entrySet().iterator();
    while (it.hasNext() && it.next().getValue() <= seq) {
      it.remove();
    }
  }

  /** Settles so far (any thread): a poll records it when it begins. */
  long settledSeq() {
    return settledSeq;
  }
}
