package dev.sluice.db.store;

/**
 * A pending event to fire, as the poll read it: it fires only if its row is still pending at this
 * epoch with this {@code time_next}.
 */
public record FireRef(long id, long epoch, long timeNextNs) {}
