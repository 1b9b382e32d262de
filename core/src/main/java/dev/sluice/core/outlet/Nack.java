package dev.sluice.core.outlet;

import dev.sluice.db.store.EventRef;

/**
 * An outlet could not deliver or handle an event: it goes back to pending after the queue's backoff
 * (or {@code retryAfterNs} when that is positive), or dead once its attempts are used up.
 *
 * @param reason why, as the destination said it (recorded as the dead reason on the last attempt)
 */
public record Nack(EventRef ref, long retryAfterNs, String reason) {}
