package dev.sluice.core.queue.ordering;

import dev.sluice.core.loop.Waiter;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.context.QueueMetrics;
import dev.sluice.core.window.OrderingKey;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An ordered queue's keys, on the database side: which polled rows must wait, and whose turn has
 * come. Runs on the poller's thread ({@code sluice-<shard>-<queue>-poller}); only {@link #freed} is
 * called from another (the dispatcher's).
 *
 * <p><b>Holding.</b> An ordered queue's polls say of each row whether an earlier event of its key
 * is pending or fired (or, with {@code ordering_on_dead=halt}, dead): such a row is not for the
 * window. It is held — {@code time_next + HELD_NS}, a compare-and-set on its epoch — which moves it
 * past every poll's range on the (state, time_next) index, so a key's backlog is read about once,
 * not at every poll (rows read per delivered event stay near one however long one key's backlog).
 *
 * <p><b>Turns.</b> When the dispatcher lets go of a key's event (acked, dead, cancelled, or gone
 * from memory), it tells this class the key ({@link #freed}); the next pass reads that key's first
 * pending row — one index seek — and, if nothing earlier is pending, fired or halting, hands it
 * straight to the window when it is due, still held in the table: the fire's compare-and-set moves
 * its {@code time_next}. One not due yet, or let go of by the window unfired, is released ({@code
 * time_next - HELD_NS}, CAS) for the polls to find.
 *
 * <p><b>From the table, not from memory.</b> A leader that dies between an ack and the release of
 * the next event leaves that event held: the first pass of a queue (every new leader's) and then a
 * pass every {@link #RECHECK_EVERY_NS} release every held row whose earlier events are all settled.
 * A queue no longer ordered releases all its held rows at its first pass.
 */
public final class KeyTurns {
  private static final Logger log = LoggerFactory.getLogger(KeyTurns.class);

  /** How often the held rows are checked for a turn the leader did not give. */
  static final long RECHECK_EVERY_NS = TimeUnit.MINUTES.toNanos(5);

  /** How often halted keys are counted (halt queues only). */
  static final long HALTED_EVERY_NS = TimeUnit.SECONDS.toNanos(10);

  /** How often some of the keys with held rows are checked (see {@link #waiting}). */
  static final long WAITING_EVERY_NS = TimeUnit.SECONDS.toNanos(1);

  /** The most keys with held rows watched; past that the periodic recheck covers the rest. */
  static final int MAX_WAITING = 100_000;

  /** The most keys one pass reads the first rows of (one statement). */
  static final int MAX_KEYS = 256;

  static final int BATCH = 1000;

  /** The most ids of rows handed over unreleased that are remembered (see {@link #handedOver}). */
  static final int MAX_HANDED_OVER = 65_536;

  private final QueueContext ctx;
  private final Waiter waiter;

  /** Keys the dispatcher let go of: any thread adds, the poller's thread takes. */
  private final ConcurrentLinkedQueue<Object> freed = new ConcurrentLinkedQueue<>();

  // --- the poller thread's
  private final Set<Object> retry = new LinkedHashSet<>();

  /**
   * The held rows this leader handed to the window without releasing them, most recent last (at
   * most {@link #MAX_HANDED_OVER}): one met here again was let go of unfired, and is released.
   */
  private final LinkedHashSet<Long> handedOver = new LinkedHashSet<>();

  /**
   * Keys with held rows, oldest checked first: every {@link #WAITING_EVERY_NS} up to {@link
   * #MAX_KEYS} of them get the same check as a freed key. That covers the turns the dispatcher
   * cannot see: an event of this key acked at another manager (a receiver's ack after a failover),
   * or made dead by the retry collector as an orphan. A key leaves when it has no pending row.
   * Filled by this leader's holds and, at its first pass, from the table.
   */
  private final LinkedHashSet<Object> waiting = new LinkedHashSet<>();

  private long lastWaitingMono;
  private boolean started;
  private long lastRecheckMono;
  private long lastHaltedMono = Long.MIN_VALUE / 2;
  private volatile int haltedKeys;

  /** Set by any thread when the table changed under the keys (a cancel, say): recheck soon. */
  private volatile boolean recheckSoon;

  public KeyTurns(QueueContext ctx, Waiter waiter) {
    this.ctx = ctx;
    this.waiter = waiter;
  }

  private boolean ordered() {
    return ctx.options().ordered() && ctx.table().orderingIndex() != null;
  }

  /** The key of a polled row ({@link OrderingKey}); null when not ordered or the key is NULL. */
  public Object keyOf(EventRow row) {
    if (!ordered()) {
      return null;
    }
    String col = ctx.table().orderingColumn();
    return col == null ? OrderingKey.QUEUE : OrderingKey.of(row.userColumns().get(col));
  }

  /** Any thread: the dispatcher let go of this key's event; its next event may go. */
  public void freed(Object key) {
    freed.add(key);
    waiter.wake();
  }

  /**
   * Any thread: events changed outside the dispatcher's sight (cancelled, purged, skipped): the
   * next pass rechecks the held rows, so a key whose earlier event went that way goes on.
   */
  public void recheckSoon() {
    recheckSoon = true;
    waiter.wake();
  }

  /** Halted keys at the last count (halt queues; 0 otherwise). */
  int haltedKeys() {
    return haltedKeys;
  }

  /** Registers the halted keys' gauge of a halting queue (any thread; once). */
  public void gauges(QueueMetrics m) {
    if (ctx.options().haltOnDead()) {
      m.gauge(
          "sluice.ordering.halted.keys",
          "keys of an ordered queue stopped at a dead event (ordering_on_dead=halt)",
          this::haltedKeys);
    }
  }

  /**
   * The rows of a poll that may go: those that wait behind their key are held (and left out). A
   * failed hold is logged; those rows stay as they are and the next poll tries again.
   */
  public List<EventRow> admit(List<EventRow> rows) {
    List<EventRef> wait = null;
    for (EventRow r : rows) {
      if (r.waitsForKey()) {
        if (wait == null) {
          wait = new ArrayList<>();
        }
        wait.add(new EventRef(r.id(), r.epoch()));
        watch(keyOf(r));
      }
    }
    if (wait == null) {
      return rows;
    }
    try {
      Map<EventRef, CasOutcome> out = ctx.ordering().hold(wait);
      ctx.metrics().keyHeld.increment(applied(out));
    } catch (RuntimeException e) {
      ctx.metrics().dbErrors.increment();
      log.warn(
          "{}: could not hold {} events behind their keys (ids {}...), the next poll retries: {}",
          ctx.where(),
          wait.size(),
          wait.get(0).id(),
          e.toString());
    }
    List<EventRow> go = new ArrayList<>(rows.size() - wait.size());
    for (EventRow r : rows) {
      if (!r.waitsForKey()) {
        go.add(r);
      }
    }
    return go;
  }

  private void watch(Object key) {
    if (key != null && waiting.size() < MAX_WAITING) {
      waiting.add(key);
    }
  }

  private static int applied(Map<EventRef, CasOutcome> out) {
    int n = 0;
    for (CasOutcome o : out.values()) {
      if (o == CasOutcome.APPLIED) {
        n++;
      }
    }
    return n;
  }

  /**
   * One pass (poller thread): the first pass and every {@link #RECHECK_EVERY_NS} the held rows are
   * checked; then the keys let go of since the last pass get their next event. Returns the rows
   * released that are due by {@code dueByNs}, for the window (their own time_next again).
   */
  public List<EventRow> pass(long dueByNs) {
    long mono = ctx.clock().monoNs();
    if (!ordered()) {
      if (!started) {
        started = true;
        releaseAll();
      }
      freed.clear();
      return List.of();
    }
    if (!started || recheckSoon || mono - lastRecheckMono >= RECHECK_EVERY_NS) {
      started = true;
      recheckSoon = false;
      lastRecheckMono = mono;
      recheck();
    }
    if (ctx.options().haltOnDead() && mono - lastHaltedMono >= HALTED_EVERY_NS) {
      lastHaltedMono = mono;
      haltedKeys = ctx.ordering().haltedKeyCount(BATCH);
    }
    Set<Object> keys = new LinkedHashSet<>(retry);
    retry.clear();
    for (Iterator<Object> it = freed.iterator(); it.hasNext() && keys.size() < MAX_KEYS; ) {
      keys.add(it.next());
      it.remove();
    }
    if (mono - lastWaitingMono >= WAITING_EVERY_NS && !waiting.isEmpty()) {
      lastWaitingMono = mono;
      for (Iterator<Object> it = waiting.iterator(); it.hasNext() && keys.size() < MAX_KEYS; ) {
        keys.add(it.next());
        it.remove(); // back at the end below, unless it has no pending row
      }
    }
    if (keys.isEmpty()) {
      return List.of();
    }
    if (!freed.isEmpty()) {
      waiter.wake(); // more keys than one pass reads: the next pass follows at once
    }
    List<EventRow> firsts;
    try {
      firsts = ctx.ordering().firstPendingOfKeys(keys);
    } catch (RuntimeException e) {
      retry.addAll(keys);
      throw e;
    }
    for (EventRow r : firsts) {
      watch(keyOf(r)); // pending rows remain: held ones may be behind it
    }
    return release(firsts, dueByNs);
  }

  /**
   * Of each key's first pending row whose turn it is: a held one due by {@code dueByNs} goes to the
   * window as it is, still held in the table (its fire's compare-and-set moves {@code time_next}
   * anyway, so releasing it first would be one more write of the row); other held ones are released
   * ({@code time_next - HELD_NS}, CAS) for the polls to find when due, and so is one handed over
   * before that comes back here (the window let go of it: no poll would ever read it held). The
   * unheld first rows due by {@code dueByNs} go to the window too. A completion queue's rows are
   * always released: their holds are their groups' too.
   */
  private List<EventRow> release(List<EventRow> firsts, long dueByNs) {
    boolean handOver = !ctx.table().completesGroups();
    List<EventRef> held = new ArrayList<>();
    List<EventRow> go = new ArrayList<>();
    int handed = 0;
    for (EventRow r : firsts) {
      if (r.waitsForKey()) {
        continue;
      }
      if (!r.held()) {
        if (r.timeNextNs() <= dueByNs) {
          go.add(r);
        }
      } else if (handOver && r.dueNs() <= dueByNs && handedOver.add(r.id())) {
        go.add(r);
        handed++;
        if (handedOver.size() > MAX_HANDED_OVER) {
          Iterator<Long> oldest = handedOver.iterator();
          oldest.next();
          oldest.remove();
        }
      } else {
        handedOver.remove(r.id());
        held.add(new EventRef(r.id(), r.epoch()));
      }
    }
    Map<EventRef, CasOutcome> out = held.isEmpty() ? Map.of() : ctx.ordering().unhold(held);
    ctx.metrics().keyReleased.increment(applied(out) + handed);
    for (EventRow r : firsts) {
      if (r.held()
          && !r.waitsForKey()
          && out.get(new EventRef(r.id(), r.epoch())) == CasOutcome.APPLIED) {
        EventRow row = released(r);
        if (row.timeNextNs() <= dueByNs) {
          go.add(row);
        }
      }
      // A release not applied: changed meanwhile; the polls read it as it is now.
    }
    return go;
  }

  private static EventRow released(EventRow r) {
    return new EventRow(
        r.id(),
        r.epoch(),
        r.dueNs(),
        r.timeCreatedNs(),
        r.priority(),
        r.tenant(),
        r.actor(),
        r.workClass(),
        r.userColumns());
  }

  /**
   * Releases every held row whose earlier events are all settled (turns no leader gave), and
   * watches the keys of the held rows: one read of the held rows' keys, then each key's first
   * pending row.
   */
  private void recheck() {
    List<Object> keys = new ArrayList<>();
    for (Object k : ctx.ordering().heldKeys(MAX_WAITING)) {
      Object key = ctx.table().orderingColumn() == null ? OrderingKey.QUEUE : OrderingKey.of(k);
      keys.add(key);
      watch(key);
    }
    int total = 0;
    for (int at = 0; at < keys.size(); at += MAX_KEYS) {
      List<EventRef> turn = new ArrayList<>();
      for (EventRow r :
          ctx.ordering()
              .firstPendingOfKeys(keys.subList(at, Math.min(keys.size(), at + MAX_KEYS)))) {
        if (r.held() && !r.waitsForKey()) {
          turn.add(new EventRef(r.id(), r.epoch()));
        }
      }
      total += turn.isEmpty() ? 0 : applied(ctx.ordering().unhold(turn));
    }
    if (total > 0) {
      ctx.metrics().keyReleased.increment(total);
      log.info(
          "{}: released {} held events whose earlier events of their key were settled (a turn"
              + " the last leader did not give)",
          ctx.where(),
          total);
    }
  }

  /** The queue is not ordered (any more): every held row gets its own time_next back. */
  private void releaseAll() {
    int total = 0;
    int n;
    do {
      n = ctx.ordering().unholdAll(BATCH);
      total += n;
    } while (n >= BATCH);
    if (total > 0) {
      ctx.metrics().keyReleased.increment(total);
      log.info(
          "{}: not ordered any more: released {} events that were held behind their keys",
          ctx.where(),
          total);
    }
  }
}
