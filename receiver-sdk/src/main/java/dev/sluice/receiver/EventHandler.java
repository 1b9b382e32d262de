package dev.sluice.receiver;

/**
 * Handles one delivered event. Runs on one of the receiver's handler threads, so it may block.
 *
 * <p>A normal return acks the event. Throwing {@link RetryLater} nacks it with the given delay; any
 * other exception nacks it with the queue's own backoff. Delivery is at-least-once: the same event
 * may be handled again (with a higher {@link ReceivedEvent#attempt()}), so handlers should be
 * idempotent.
 */
@FunctionalInterface
public interface EventHandler {
  void handle(ReceivedEvent event) throws Exception;
}
