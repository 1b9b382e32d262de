package dev.sluice.db.store;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * An ordered queue's port (the queue engine's key turns): rows held behind an earlier event of
 * their key, and released when their turn comes. Every change is a compare-and-set on the epoch.
 */
public interface OrderingStore extends QueueStore {

  /**
   * These pending rows wait behind an earlier event of their key, out of every poll's range ({@code
   * time_next + HELD_NS}; a compare-and-set on the epoch, of rows not held yet).
   */
  Map<EventRef, CasOutcome> hold(Collection<EventRef> refs);

  /** Held rows whose turn came: their own {@code time_next} again (a CAS on the epoch). */
  Map<EventRef, CasOutcome> unhold(Collection<EventRef> refs);

  /**
   * Each key's first pending row, held or not, with its {@link KeyPlace}; for a queue that is one
   * key, its first pending row whatever {@code keys} holds. One statement.
   */
  List<EventRow> firstPendingOfKeys(Collection<Object> keys);

  /**
   * Up to {@code limit} values of the ordering column that have held rows (raw column values; one
   * empty string for a queue ordered as one key).
   */
  List<Object> heldKeys(int limit);

  /** The queue is no longer ordered: unholds up to {@code limit} held rows; returns how many. */
  int unholdAll(int limit);

  /** How many keys are halted at a dead event, up to {@code limit}. */
  int haltedKeyCount(int limit);
}
