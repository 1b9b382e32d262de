package dev.sluice.db.store;

/**
 * Returns a fired event to pending at {@code retryAtNs}, or to dead when {@code dead} (its attempts
 * are used up).
 */
public record Release(EventRef ref, long retryAtNs, boolean dead) {}
