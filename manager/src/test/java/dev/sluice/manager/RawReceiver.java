package dev.sluice.manager;

import dev.sluice.proto.v1.AckResult;
import dev.sluice.proto.v1.Acks;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.EventRef;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Nack;
import dev.sluice.proto.v1.Nacks;
import dev.sluice.proto.v1.ReceiverMessage;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.proto.v1.Subscribe;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A receiver speaking the wire protocol directly, so tests control exactly what is acked, nacked or
 * abandoned.
 */
public final class RawReceiver implements AutoCloseable {
  public final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
  public final List<Event> all = new CopyOnWriteArrayList<>();
  public final List<AckResult> results = new CopyOnWriteArrayList<>();
  public final LinkedBlockingQueue<dev.sluice.proto.v1.ExtendResult> extendResults =
      new LinkedBlockingQueue<>();

  /** The sizes of the event messages received, in bytes, in order. */
  public final List<Integer> batchBytes = new CopyOnWriteArrayList<>();

  public volatile boolean subscribed;

  /** The credits the Subscribed answer granted. */
  public volatile int grantedMaxInFlight;

  public volatile Status error;
  public volatile boolean completed;
  private final StreamObserver<ReceiverMessage> out;

  public RawReceiver(SluiceGrpc.SluiceStub stub, String queue, String receiverId, int maxInFlight) {
    this(stub, queue, receiverId, maxInFlight, "");
  }

  /** A raw receiver on any stub (e.g. one with TLS and a token). */
  public static RawReceiver open(
      SluiceGrpc.SluiceStub stub, String queue, String receiverId, int maxInFlight) {
    return new RawReceiver(stub, queue, receiverId, maxInFlight, "");
  }

  public static RawReceiver withKeyRange(
      SluiceGrpc.SluiceStub stub, String queue, String receiverId, int maxInFlight, String range) {
    return new RawReceiver(stub, queue, receiverId, maxInFlight, range);
  }

  private RawReceiver(
      SluiceGrpc.SluiceStub stub, String queue, String receiverId, int maxInFlight, String range) {
    this.out =
        stub.subscribe(
            new StreamObserver<>() {
              @Override
              public void onNext(ManagerMessage m) {
                switch (m.getKindCase()) {
                  case SUBSCRIBED -> {
                    grantedMaxInFlight = m.getSubscribed().getMaxInFlight();
                    subscribed = true;
                  }
                  case EVENTS -> {
                    batchBytes.add(m.getSerializedSize());
                    events.addAll(m.getEvents().getEventsList());
                    all.addAll(m.getEvents().getEventsList());
                  }
                  case ACK_RESULTS -> results.addAll(m.getAckResults().getResultsList());
                  case EXTEND_RESULTS ->
                      extendResults.addAll(m.getExtendResults().getResultsList());
                  default -> {}
                }
              }

              @Override
              public void onError(Throwable t) {
                error = Status.fromThrowable(t);
              }

              @Override
              public void onCompleted() {
                completed = true;
              }
            });
    send(
        ReceiverMessage.newBuilder()
            .setSubscribe(
                Subscribe.newBuilder()
                    .setQueue(queue)
                    .setReceiverId(receiverId)
                    .setMaxInFlight(maxInFlight)
                    .setKeyRange(range))
            .build());
  }

  public synchronized void send(ReceiverMessage m) {
    out.onNext(m);
  }

  public void ack(long id, long epoch) {
    ack(id, epoch, "");
  }

  public void ack(long id, long epoch, String shard) {
    send(
        ReceiverMessage.newBuilder()
            .setAcks(
                Acks.newBuilder()
                    .addEvents(EventRef.newBuilder().setId(id).setEpoch(epoch).setShard(shard)))
            .build());
  }

  /** Acks {@code e} as a well-behaved receiver does: with its delivery token. */
  public void ack(Event e) {
    send(
        ReceiverMessage.newBuilder()
            .setAcks(
                Acks.newBuilder()
                    .addEvents(
                        EventRef.newBuilder()
                            .setId(e.getId())
                            .setEpoch(e.getEpoch())
                            .setShard(e.getShard())
                            .setDeliveryToken(e.getDeliveryToken())))
            .build());
  }

  public void nack(Event e, long retryAfterMs) {
    nack(e, retryAfterMs, "");
  }

  public void nack(Event e, long retryAfterMs, String reason) {
    nack(e, retryAfterMs, reason, false);
  }

  private void nack(Event e, long retryAfterMs, String reason, boolean snooze) {
    send(
        ReceiverMessage.newBuilder()
            .setNacks(
                Nacks.newBuilder()
                    .addNacks(
                        Nack.newBuilder()
                            .setEvent(
                                EventRef.newBuilder()
                                    .setId(e.getId())
                                    .setEpoch(e.getEpoch())
                                    .setShard(e.getShard())
                                    .setDeliveryToken(e.getDeliveryToken()))
                            .setRetryAfterMs(retryAfterMs)
                            .setReason(reason)
                            .setSnooze(snooze)))
            .build());
  }

  /** Snoozes {@code e} for {@code afterMs}: a nack with the snooze flag. */
  public void snooze(Event e, long afterMs) {
    nack(e, afterMs, "snoozed", true);
  }

  /** Asks to move {@code e}'s deadline to {@code byMs} from now (its fire time as delivered). */
  public void extend(Event e, long byMs) {
    extend(e, e.getEpoch(), byMs);
  }

  /** The same, for attempt {@code epoch} of {@code e} (a stale one, say). */
  public void extend(Event e, long epoch, long byMs) {
    send(
        ReceiverMessage.newBuilder()
            .setExtends(
                dev.sluice.proto.v1.Extends.newBuilder()
                    .addExtends(
                        dev.sluice.proto.v1.Extend.newBuilder()
                            .setEvent(
                                EventRef.newBuilder()
                                    .setId(e.getId())
                                    .setEpoch(epoch)
                                    .setShard(e.getShard())
                                    .setDeliveryToken(e.getDeliveryToken()))
                            .setExtendByMs(byMs)
                            .setTimeFiredNs(e.getTimeFiredNs())))
            .build());
  }

  /** Breaks the stream as a crashed receiver would. */
  public synchronized void breakStream() {
    out.onError(Status.CANCELLED.withDescription("receiver crashed").asRuntimeException());
  }

  @Override
  public synchronized void close() {
    try {
      out.onCompleted();
    } catch (RuntimeException ignored) {
      // already closed
    }
  }
}
