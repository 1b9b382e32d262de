package dev.sluice.core.queue.dispatch;

/**
 * One outlet (a receiver's stream, or a channel) on one queue, as the dispatcher last published it
 * (for the status page).
 *
 * @param inFlight events sent to it and not yet settled
 * @param maxInFlight the credits it granted
 * @param draining it announced its shutdown: no new sends
 */
public record ReceiverStats(
    String receiverId, long streamId, int inFlight, int maxInFlight, boolean draining) {}
