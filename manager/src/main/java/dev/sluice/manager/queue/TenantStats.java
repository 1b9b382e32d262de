package dev.sluice.manager.queue;

/**
 * One tenant's figures on one queue.
 *
 * @param queued events held in the window (due or soon due)
 * @param inFlight events fired and not yet settled
 * @param dispatched events fired since the queue started
 */
public record TenantStats(String tenant, long queued, long inFlight, long dispatched) {}
