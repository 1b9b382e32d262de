package dev.sluice.receiver;

/**
 * Sees every event a receiver handles: metrics ({@link MicrometerReceiverMetrics}) and tracing
 * ({@link OpenTelemetryTracing}) are observers, and an application can add its own with {@link
 * SluiceReceiverBuilder#observer}. Called on the handler thread, around the handler: {@link
 * #handlingStarted} just before it, the returned {@link Handling#ended} just after it, whatever
 * happened. An observer that throws is logged and ignored: it never changes the event's outcome.
 *
 * <p>Two optional calls tell what the managers answered, event by event and stream by stream, where
 * {@link ReceiverStats} only counts: {@link #answered} (each ack's or nack's result, a {@code
 * STALE} one included) and {@link #streamEnded} (a stream that a manager ended or refused, with its
 * gRPC status). They run on the receiver's gRPC callback thread (or its connect thread, for a
 * stream that could not even start), which every stream shares: they must return quickly and never
 * block.
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

  /** What a manager made of one ack or nack ({@code AckResult}'s status). */
  enum AnswerStatus {
    /** Applied. */
    OK,
    /**
     * The attempt no longer applies (it timed out and was fired again, or was settled already):
     * nothing changed.
     */
    STALE,
    /** No such event (or, with authentication on, not one delivered to this receiver). */
    UNKNOWN
  }

  /**
   * A manager's answer to one ack or nack this receiver sent.
   *
   * @param endpoint the target whose stream carried the answer
   * @param shard the event's shard
   * @param id the event's id
   * @param epoch the attempt the ack or nack carried
   * @param status what the manager made of it
   */
  record Answer(String endpoint, String shard, long id, long epoch, AnswerStatus status) {}

  /**
   * A manager answered an ack or nack (an ack answered twice, say once on a stream that then broke
   * and once again on the next, is reported twice). Default: nothing.
   */
  default void answered(Answer answer) {}

  /**
   * A Subscribe stream to {@code endpoint} ended or could not be opened: {@code code} is the gRPC
   * status code's name ({@code OK} when it ended normally; {@code UNAUTHENTICATED}, {@code
   * PERMISSION_DENIED}, {@code UNAVAILABLE}...), {@code description} its text or null. The receiver
   * retries with its backoff whatever the code, as long as it runs. Default: nothing.
   */
  default void streamEnded(String endpoint, String code, String description) {}
}
