package dev.sluice.manager.grpc;

import com.google.protobuf.CodedOutputStream;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.EventBatch;
import dev.sluice.proto.v1.ManagerMessage;
import java.util.ArrayList;
import java.util.List;

/**
 * The event messages of one delivery to a receiver, each at most {@code maxMessageBytes} as
 * serialized: an event that would take the message over the limit starts a new message. Events each
 * no larger than the queue's max_event_bytes (which is below the limit by more than a message's own
 * header) therefore never add up to a message the receiver refuses; before, a few 1 MB events sent
 * together broke the receiver's stream, and their release and resend broke it again until they were
 * dead.
 *
 * <p>Used by the dispatcher thread within one call: not thread-safe.
 */
final class OutgoingBatches {
  /** A ManagerMessage's tag and length around its EventBatch. */
  private static final int ENVELOPE_BYTES = 1 + 5;

  private final int maxMessageBytes;
  private final List<ManagerMessage> done = new ArrayList<>();
  private EventBatch.Builder open = EventBatch.newBuilder();
  private long bytes = ENVELOPE_BYTES;

  OutgoingBatches(int maxMessageBytes) {
    this.maxMessageBytes = maxMessageBytes;
  }

  /** Adds {@code e} to the current message, or to a new one if it would not fit. */
  void add(Event e) {
    int cost = CodedOutputStream.computeMessageSize(EventBatch.EVENTS_FIELD_NUMBER, e);
    if (open.getEventsCount() > 0 && bytes + cost > maxMessageBytes) {
      done.add(ManagerMessage.newBuilder().setEvents(open).build());
      open = EventBatch.newBuilder();
      bytes = ENVELOPE_BYTES;
    }
    open.addEvents(e);
    bytes += cost;
  }

  /** Every message, in the order filled; the last one may be partly full. */
  List<ManagerMessage> all() {
    List<ManagerMessage> out = new ArrayList<>(done);
    if (open.getEventsCount() > 0) {
      out.add(ManagerMessage.newBuilder().setEvents(open).build());
    }
    return out;
  }
}
