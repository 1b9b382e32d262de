package dev.sluice.db.store;

/**
 * Where a pending row of an ordered queue stands in its key, as the read that returned it saw the
 * table: the key's first unsettled event, behind an earlier one (pending or fired), or behind a
 * dead one while the queue halts on dead events. Always {@link #FIRST} for an unordered queue and
 * for a row whose key is NULL.
 */
public enum KeyPlace {
  /** No earlier event of the key is pending, fired or (halting) dead: it may go. */
  FIRST,
  /** An earlier event of the key is pending or in flight: it waits. */
  BEHIND,
  /** An earlier event of the key is dead and the queue halts on dead events: it waits. */
  HALTED
}
