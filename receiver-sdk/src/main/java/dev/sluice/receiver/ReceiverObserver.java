package dev.sluice.receiver;

/**
 * Sees every event a receiver handles: metrics ({@link MicrometerReceiverMetrics}) and tracing
 * ({@link OpenTelemetryTracing}) are observers, and an application can add its own with {@link
 * SluiceReceiverBuilder#observer}. Called on the handler thread, around the handler: {@link
 * #handlingStarted} just before it, the returned {@link Handling#ended} just after it, whatever
 * happened. An observer that throws is logged and ignored: it never changes the event's outcome.
 */
public interface ReceiverObserver {

  /** How a handling ended; {@link #ACKED} is acked, the others are nacked. */
  enum Outcome {
    /** The handler returned: the event is acked. */
    ACKED,
    /** The handler threw {@link RetryLater}: nacked with its delay. */
    RETRY_LATER,
    /** The handler threw anything else: nacked with the queue's backoff. */
    FAILED;

    /** The lower-case tag value, e.g. {@code retry_later}. */
    public String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** One handling in progress. */
  interface Handling {
    Handling NONE = (outcome, error) -> {};

    /**
     * @param error what the handler threw (a {@link RetryLater} included), null when it returned
     */
    void ended(Outcome outcome, Throwable error);
  }

  /** The handler is about to run for {@code event}, on this thread. */
  Handling handlingStarted(ReceivedEvent event);
}
