package dev.sluice.test;

import dev.sluice.db.EventState;

/**
 * One event's row as the test read it.
 *
 * @param attempts how often it was fired (its epoch)
 */
public record EventSnapshot(
    String queue, long id, EventState state, long attempts, String tenant, int priority) {}
