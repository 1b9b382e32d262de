package dev.sluice.db.store;

/** What a compare-and-set on (id, epoch) did. */
public enum CasOutcome {
  /** The row was in the expected state and epoch, and changed. */
  APPLIED,
  /** The row exists but not in that state and epoch; nothing changed. */
  STALE,
  /** No row with that id; nothing changed. */
  UNKNOWN
}
