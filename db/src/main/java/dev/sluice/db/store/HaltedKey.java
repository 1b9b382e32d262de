package dev.sluice.db.store;

/**
 * A key of an ordered queue that stopped at a dead event ({@code ordering_on_dead=halt}).
 *
 * @param key the key's value as text (empty for a queue ordered as one key)
 * @param deadId the key's first dead event: replay it or skip it to let the key go on
 * @param waiting the pending events of the key behind it
 */
public record HaltedKey(String key, long deadId, long waiting) {}
