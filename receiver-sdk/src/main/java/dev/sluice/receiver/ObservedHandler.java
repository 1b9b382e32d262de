package dev.sluice.receiver;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The user's handler with the {@link ReceiverObserver}s around it. Observers start in order and end
 * in reverse order (so a tracing span opened first closes last); an observer's failure is logged
 * and never changes the event's outcome.
 */
final class ObservedHandler implements EventHandler {
  private static final Logger log = LoggerFactory.getLogger(ObservedHandler.class);

  private final EventHandler handler;
  private final List<ReceiverObserver> observers;

  ObservedHandler(EventHandler handler, List<ReceiverObserver> observers) {
    this.handler = handler;
    this.observers = List.copyOf(observers);
  }

  @Override
  public void handle(ReceivedEvent event) throws Exception {
    List<ReceiverObserver.Handling> started = new ArrayList<>(observers.size());
    for (ReceiverObserver o : observers) {
      try {
        started.add(o.handlingStarted(event));
      } catch (Throwable t) {
        log.warn("receiver observer {} failed at start: {}", o, t.toString(), t);
      }
    }
    ReceiverObserver.Outcome outcome = ReceiverObserver.Outcome.ACKED;
    Throwable error = null;
    try {
      handler.handle(event);
    } catch (RetryLater r) {
      outcome = ReceiverObserver.Outcome.RETRY_LATER;
      error = r;
      throw r;
    } catch (Throwable t) {
      outcome = ReceiverObserver.Outcome.FAILED;
      error = t;
      throw t;
    } finally {
      for (int i = started.size() - 1; i >= 0; i--) {
        try {
          started.get(i).ended(outcome, error);
        } catch (Throwable t) {
          log.warn("receiver observer failed at end: {}", t.toString(), t);
        }
      }
    }
  }
}
