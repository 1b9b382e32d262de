package dev.sluice.db.store;

/** Rows of a queue table by state, and the age of the oldest due pending event. */
public record StateCounts(
    long pending, long fired, long acked, long dead, long cancelled, long oldestDueNs) {}
