package dev.sluice.manager.grpc;

import dev.sluice.db.store.EventRef;
import dev.sluice.manager.QueueEngine;
import dev.sluice.manager.queue.QueueManager;
import dev.sluice.manager.queue.ReceiverStream;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.ReceiverMessage;
import dev.sluice.proto.v1.Subscribe;
import dev.sluice.proto.v1.Subscribed;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One receiver's Subscribe stream, from the server's side: validates the Subscribe, attaches the
 * stream to its queue's manager and forwards acks, nacks and flow changes. gRPC calls these methods
 * serially for one stream.
 */
final class SubscribeCall implements StreamObserver<ReceiverMessage> {
  static final int MAX_IN_FLIGHT_LIMIT = 10_000;
  static final int MAX_RECEIVER_ID = 128;
  private static final AtomicLong STREAM_IDS = new AtomicLong();

  private final QueueEngine engine;
  private final ServerCallStreamObserver<ManagerMessage> out;
  private volatile QueueManager queue;
  private ReceiverStream stream;
  private boolean ended;

  SubscribeCall(QueueEngine engine, ServerCallStreamObserver<ManagerMessage> out) {
    this.engine = engine;
    this.out = out;
    out.setOnReadyHandler(
        () -> {
          QueueManager q = queue;
          if (q != null) {
            q.wake();
          }
        });
  }

  @Override
  public void onNext(ReceiverMessage m) {
    if (ended) {
      return;
    }
    try {
      switch (m.getKindCase()) {
        case SUBSCRIBE -> subscribe(m.getSubscribe());
        case ACKS -> {
          requireSubscribed("acks");
          List<EventRef> refs = new ArrayList<>(m.getAcks().getEventsCount());
          m.getAcks().getEventsList().forEach(r -> refs.add(new EventRef(r.getId(), r.getEpoch())));
          queue.onAcks(stream, refs);
        }
        case NACKS -> {
          requireSubscribed("nacks");
          queue.onNacks(stream, List.copyOf(m.getNacks().getNacksList()));
        }
        case FLOW -> {
          requireSubscribed("flow");
          queue.onFlow(stream, checkMaxInFlight(m.getFlow().getMaxInFlight()));
        }
        default -> throw Statuses.invalid("empty message: set subscribe, acks, nacks or flow");
      }
    } catch (RuntimeException e) {
      fail(Statuses.of(e, where()).getStatus());
    }
  }

  private void subscribe(Subscribe s) {
    if (stream != null) {
      throw Statuses.invalid("already subscribed to queue " + stream.queue() + " on this stream");
    }
    if (s.getQueue().isBlank()) {
      throw Statuses.invalid("subscribe: queue is required");
    }
    String rid = s.getReceiverId();
    if (rid.isBlank() || rid.length() > MAX_RECEIVER_ID) {
      throw Statuses.invalid(
          "subscribe: receiver_id is required, at most " + MAX_RECEIVER_ID + " characters");
    }
    int max = checkMaxInFlight(s.getMaxInFlight());
    QueueManager q =
        engine
            .find(s.getQueue())
            .orElseThrow(
                () ->
                    engine
                        .problem(s.getQueue())
                        .map(
                            p -> Status.FAILED_PRECONDITION.withDescription(p).asRuntimeException())
                        .orElseGet(
                            () ->
                                Status.NOT_FOUND
                                    .withDescription(
                                        "queue '"
                                            + s.getQueue()
                                            + "' is not served here (served: "
                                            + String.join(", ", engine.servedNames())
                                            + ")")
                                    .asRuntimeException()));
    stream = new ReceiverStream(rid, q.queue(), STREAM_IDS.incrementAndGet(), max, out);
    stream.send(
        ManagerMessage.newBuilder()
            .setSubscribed(
                Subscribed.newBuilder()
                    .setQueue(q.queue())
                    .setShard(q.shard())
                    .setReceiverId(rid)
                    .setMaxInFlight(max))
            .build());
    queue = q;
    q.attach(stream);
  }

  private static int checkMaxInFlight(int n) {
    if (n < 1 || n > MAX_IN_FLIGHT_LIMIT) {
      throw Statuses.invalid("max_in_flight must be 1.." + MAX_IN_FLIGHT_LIMIT + ", was " + n);
    }
    return n;
  }

  private void requireSubscribed(String what) {
    if (stream == null) {
      throw Statuses.invalid(what + " before subscribe: the first message must be a subscribe");
    }
  }

  private String where() {
    return stream == null ? "subscribe stream" : "queue " + stream.queue() + " " + stream;
  }

  private void fail(Status status) {
    ended = true;
    if (stream != null) {
      // Close first: detaching lets the dispatcher mark the stream closed, after which close()
      // would no longer send the status and the call would stay open.
      stream.close(status);
      queue.detach(stream, "stream failed: " + status.getCode());
    } else {
      try {
        out.onError(status.asRuntimeException());
      } catch (RuntimeException ignored) {
        // already closed
      }
    }
  }

  @Override
  public void onError(Throwable t) {
    ended = true;
    if (stream != null) {
      queue.detach(stream, "stream broke: " + Status.fromThrowable(t).getCode());
    }
  }

  @Override
  public void onCompleted() {
    ended = true;
    if (stream != null) {
      stream.close(Status.OK); // before detach, as in fail()
      queue.detach(stream, "stream closed by receiver");
    } else {
      out.onCompleted();
    }
  }
}
