package dev.sluice.manager.grpc;

import com.google.protobuf.CodedOutputStream;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.EventBatch;
import dev.sluice.proto.v1.ManagerMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The event messages of one fire round, per receiver, each at most {@code maxMessageBytes} as
 * serialized: an event that would take its receiver's message over the limit starts a new message.
 * Events each no larger than the queue's max_event_bytes (which is below the limit by more than a
 * message's own header) therefore never add up to a message the receiver refuses; before, a few 1
 * MB events sent together broke the receiver's stream, and their release and resend broke it again
 * until they were dead.
 *
 * <p>Used by the dispatcher thread within one call: not thread-safe.
 */
final class OutgoingBatches {
  /** A ManagerMessage's tag and length around its EventBatch. */
  private static final int ENVELOPE_BYTES = 1 + 5;

  private final int maxMessageBytes;
  private final Map<ReceiverStream, Open> open = new LinkedHashMap<>();
  private final List<Ready> ready = new ArrayList<>();

  OutgoingBatches(int maxMessageBytes) {
    this.maxMessageBytes = maxMessageBytes;
  }

  private static final class Open {
    final EventBatch.Builder batch = EventBatch.newBuilder();
    long bytes = ENVELOPE_BYTES;
  }

  private record Ready(ReceiverStream to, ManagerMessage message) {}

  /** Adds {@code e} to {@code to}'s current message, or to a new one if it would not fit. */
  void add(ReceiverStream to, Event e) {
    int cost = CodedOutputStream.computeMessageSize(EventBatch.EVENTS_FIELD_NUMBER, e);
    Open o = open.get(to);
    if (o != null && o.batch.getEventsCount() > 0 && o.bytes + cost > maxMessageBytes) {
      ready.add(new Ready(to, message(o)));
      o = null;
    }
    if (o == null) {
      o = new Open();
      open.put(to, o);
    }
    o.batch.addEvents(e);
    o.bytes += cost;
  }

  private static ManagerMessage message(Open o) {
    return ManagerMessage.newBuilder().setEvents(o.batch).build();
  }

  /**
   * Sends every message, in the order filled. A failed send leaves its events in flight: the
   * stream's close releases them at once. Returns the number of messages.
   */
  int sendAll() {
    open.forEach((to, o) -> ready.add(new Ready(to, message(o))));
    open.clear();
    for (Ready r : ready) {
      r.to().send(r.message());
    }
    int n = ready.size();
    ready.clear();
    return n;
  }
}
