package dev.sluice.receiver;

import dev.sluice.proto.v1.AckResult;
import io.grpc.Status;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the receiver's {@link ReceiverObserver}s what the managers answered: each ack's or nack's
 * result ({@link ReceiverObserver#answered}) and each stream's end ({@link
 * ReceiverObserver#streamEnded}). Called on the gRPC callback thread (a stream that failed to
 * start: the connect thread); holds no state of its own. An observer that throws is logged and
 * ignored, as around the handler ({@link ObservedHandler}).
 */
final class ObserverNotices {
  private static final Logger log = LoggerFactory.getLogger(ObserverNotices.class);

  private final List<ReceiverObserver> observers;

  ObserverNotices(List<ReceiverObserver> observers) {
    this.observers = List.copyOf(observers);
  }

  /** A manager's AckResult, received on {@code endpoint}'s stream. */
  void answered(String endpoint, AckResult result) {
    if (observers.isEmpty()) {
      return;
    }
    ReceiverObserver.AnswerStatus status =
        switch (result.getStatus()) {
          case ACK_STATUS_OK -> ReceiverObserver.AnswerStatus.OK;
          case ACK_STATUS_STALE -> ReceiverObserver.AnswerStatus.STALE;
          case ACK_STATUS_UNKNOWN -> ReceiverObserver.AnswerStatus.UNKNOWN;
          default -> null; // UNSPECIFIED or newer than this SDK: not counted either
        };
    if (status == null) {
      return;
    }
    ReceiverObserver.Answer answer =
        new ReceiverObserver.Answer(
            endpoint,
            result.getEvent().getShard(),
            result.getEvent().getId(),
            result.getEvent().getEpoch(),
            status);
    for (ReceiverObserver o : observers) {
      try {
        o.answered(answer);
      } catch (Throwable t) {
        log.warn("receiver observer {} failed on an answer: {}", o, t.toString(), t);
      }
    }
  }

  /** {@code endpoint}'s stream ended with {@code status}. */
  void streamEnded(String endpoint, Status status) {
    for (ReceiverObserver o : observers) {
      try {
        o.streamEnded(endpoint, status.getCode().name(), status.getDescription());
      } catch (Throwable t) {
        log.warn("receiver observer {} failed on a stream's end: {}", o, t.toString(), t);
      }
    }
  }
}
