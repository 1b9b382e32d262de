package dev.sluice.spring;

import dev.sluice.receiver.ReceivedEvent;

/**
 * Told when a listener fails an event's last attempt: the nack that follows makes the event {@code
 * dead} (the queue's {@code max_attempts}, see "Retries and dead events" in the README). Name the
 * bean in {@link SluiceListener#deadLetterHandler()}. Typical uses: copy the event to a parking
 * table, alert, open a ticket. It runs on the handler thread before the nack is sent; an exception
 * it throws is logged and does not change the outcome.
 */
@FunctionalInterface
public interface SluiceDeadLetterHandler {
  /**
   * @param listenerId the listener's id
   * @param event the delivery whose last attempt failed
   * @param metadata its id, attempt, queue, shard, tenant and times
   * @param failure what the listener (or its error handler) threw
   */
  void deadLetter(
      String listenerId, ReceivedEvent event, EventMetadata metadata, Exception failure);
}
