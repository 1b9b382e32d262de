package dev.sluice.core.queue.dispatch;

import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.store.DispatchStore;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code key_max_in_flight=N}: at most N events sharing a key (the {@code ordering_column}'s value)
 * in flight at once on this shard, in any order. A key's count is this leader's own events (from
 * the credit taken for them to its return: {@link #entered}, {@link #left}) plus the rows a
 * previous leader fired that are still fired in the table ({@link #census}). An event taken from
 * the window whose key is at N goes aside here, out of the window, so that it holds back neither
 * other keys nor other tenants; when one of its key's events leaves flight, the oldest aside goes
 * back to the window ({@link #takeFreed}) and takes its turn.
 *
 * <p>The table is the truth across failovers: a new leader fires no keyed event before its first
 * census has counted each key's fired rows, and counts those again (leaving out its own ids) at
 * most once a second until none is left. A count read while its own events fire is higher than the
 * truth, never lower: the limit may be under-used for a moment, never passed.
 *
 * <p>At most {@code cache_size} events wait aside; past that, an event taken at its key's limit is
 * dropped from memory (its row stays pending) and read again when the poller's sweep comes round. A
 * key with a backlog far larger than N is therefore read from the table more than once.
 *
 * <p>Owned by the {@link Dispatcher} thread: no locks, and the census is the one read this thread
 * makes itself (an indexed GROUP BY, only after a takeover while a previous leader's rows are out).
 * {@link #waiting} and {@link #waits} are read by the metrics' thread.
 */
final class KeyLimits {
  static final long CENSUS_EVERY_NS = TimeUnit.SECONDS.toNanos(1);

  private final int max;
  private final String column;
  private final int asideCap;

  /** This leader's events in flight (credit taken), by key. */
  private final Map<Object, Set<Long>> own = new HashMap<>();

  /** Rows fired by a previous leader and still fired at the last census, by key. */
  private Map<Object, Integer> foreign = new HashMap<>();

  private boolean censusDone;
  private long nextCensusNs = Long.MIN_VALUE;

  private final Map<Object, ArrayDeque<CachedEvent>> aside = new HashMap<>();
  private final Set<Long> asideIds = new HashSet<>();
  private final List<CachedEvent> freed = new ArrayList<>();

  private volatile int waiting;
  private volatile long waits;

  KeyLimits(QueueOptions o) {
    this.max = o.keyLimited() ? o.keyMaxInFlight() : 0;
    this.column = o.orderingColumn().toLowerCase(Locale.ROOT);
    this.asideCap = Math.max(1, o.cacheSize());
  }

  boolean active() {
    return max > 0;
  }

  /** {@code e}'s key, as the census gives keys; null: not limited. */
  Object keyOf(CachedEvent e) {
    Object v = e.columns.get(column);
    return DispatchStore.normalKey(v);
  }

  /** Whether {@code e} may fire now: no key, or its key under N (and the census taken). */
  boolean mayFire(CachedEvent e) {
    Object k = keyOf(e);
    return k == null || (censusDone && count(k) < max);
  }

  /** {@code e} was taken at its key's limit: it waits here (or, past the cap, in the table). */
  void setAside(CachedEvent e) {
    waits = waits + 1; // only this thread writes it
    if (asideIds.size() >= asideCap || !asideIds.add(e.boxedId)) {
      return; // dropped from memory: its row stays pending and is read again
    }
    aside.computeIfAbsent(keyOf(e), k -> new ArrayDeque<>()).add(e);
    waiting = asideIds.size();
  }

  /** A credit was taken for {@code e}: it counts for its key until {@link #left}. */
  void entered(CachedEvent e) {
    Object k = keyOf(e);
    if (k != null) {
      own.computeIfAbsent(k, x -> new HashSet<>()).add(e.boxedId);
    }
  }

  /** {@code e} is no longer in flight here (settling, not fired, given back): once is enough. */
  void left(CachedEvent e) {
    Object k = keyOf(e);
    if (k == null) {
      return;
    }
    Set<Long> ids = own.get(k);
    if (ids != null && ids.remove(e.boxedId)) {
      if (ids.isEmpty()) {
        own.remove(k);
      }
      release(k);
    }
  }

  /** Whether {@code id} waits aside here (the window must not take its row again). */
  boolean holds(Long id) {
    return asideIds.contains(id);
  }

  /** The events freed since the last call, to go back to the window. */
  List<CachedEvent> takeFreed() {
    if (freed.isEmpty()) {
      return List.of();
    }
    List<CachedEvent> out = new ArrayList<>(freed);
    freed.clear();
    return out;
  }

  /**
   * Counts the fired rows of previous leaders: every key's at the first call, then those of the
   * keys that had some, at most once a second, until none is left. A failed read is tried again
   * later; keyed events wait until the first one succeeded.
   *
   * @param mono monotonic now
   * @return the error of a failed read, or null
   */
  RuntimeException census(DispatchStore store, long mono) {
    if (!active() || (censusDone && foreign.isEmpty()) || mono < nextCensusNs) {
      return null;
    }
    nextCensusNs = mono + CENSUS_EVERY_NS;
    Set<Object> keys = censusDone ? foreign.keySet() : null;
    List<Long> except = new ArrayList<>();
    own.forEach(
        (k, ids) -> {
          if (keys == null || keys.contains(k)) {
            except.addAll(ids);
          }
        });
    Map<Object, Integer> read;
    try {
      read = store.firedPerKey(keys == null ? null : new ArrayList<>(keys), except);
    } catch (RuntimeException e) {
      return e;
    }
    Set<Object> before = new HashSet<>(foreign.keySet());
    foreign = new HashMap<>(read);
    foreign.values().removeIf(n -> n <= 0);
    if (!censusDone) {
      censusDone = true;
      before.addAll(aside.keySet());
    }
    for (Object k : before) {
      release(k);
    }
    return null;
  }

  /** Events waiting aside now (any thread). */
  int waiting() {
    return waiting;
  }

  /** Times an event was set aside at its key's limit (any thread). */
  long waits() {
    return waits;
  }

  private int count(Object k) {
    Set<Long> ids = own.get(k);
    return (ids == null ? 0 : ids.size()) + foreign.getOrDefault(k, 0);
  }

  /** Frees as many of {@code k}'s aside events as it has room for now. */
  private void release(Object k) {
    ArrayDeque<CachedEvent> q = aside.get(k);
    if (q == null || !censusDone) {
      return;
    }
    for (int room = max - count(k); room > 0 && !q.isEmpty(); room--) {
      CachedEvent e = q.poll();
      asideIds.remove(e.boxedId);
      freed.add(e);
    }
    if (q.isEmpty()) {
      aside.remove(k);
    }
    waiting = asideIds.size();
  }
}
