package dev.sluice.spring;

import dev.sluice.receiver.ReceivedEvent;

/**
 * Decides what a listener's exception means, before the event is nacked. Declare one bean of this
 * type for every listener, or name one per listener with {@link SluiceListener#errorHandler()}.
 *
 * <p>Return normally to ack the event anyway (the failure is handled, e.g. logged and dropped);
 * throw {@link dev.sluice.receiver.RetryLater} to retry after a delay of your choosing; rethrow (or
 * throw anything else) to nack it with the queue's backoff. Runs on the handler thread, after the
 * listener's transaction (if any) rolled back.
 */
@FunctionalInterface
public interface SluiceErrorHandler {
  /**
   * @param listenerId the listener's id
   * @param event the delivery that failed
   * @param failure what the listener threw
   */
  void handle(String listenerId, ReceivedEvent event, Exception failure) throws Exception;
}
