package dev.sluice.db.store;

/**
 * Rows of a queue table by state, and the age of the oldest due pending event.
 *
 * @param other rows whose state is none of Sluice's (written by hand): never served, shown so that
 *     they are noticed
 */
public record StateCounts(
    long pending, long fired, long acked, long dead, long cancelled, long oldestDueNs, long other) {
  public StateCounts(
      long pending, long fired, long acked, long dead, long cancelled, long oldestDueNs) {
    this(pending, fired, acked, dead, cancelled, oldestDueNs, 0);
  }
}
