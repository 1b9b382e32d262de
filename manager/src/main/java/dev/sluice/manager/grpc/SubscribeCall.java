package dev.sluice.manager.grpc;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.outlet.Extend;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.KeyRange;
import dev.sluice.db.store.EventRef;
import dev.sluice.manager.channel.ChannelOutlets;
import dev.sluice.manager.security.StreamGuard;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Nack;
import dev.sluice.proto.v1.ReceiverMessage;
import dev.sluice.proto.v1.Subscribe;
import dev.sluice.proto.v1.Subscribed;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * One receiver's Subscribe stream, from the server's side: validates the Subscribe, registers the
 * subscription with the engine (which attaches it on every shard this process leads) and routes
 * acks and nacks to the shard each event came from. gRPC calls these methods serially for one
 * stream.
 */
final class SubscribeCall implements StreamObserver<ReceiverMessage> {
  static final int MAX_IN_FLIGHT_LIMIT = 10_000;
  static final int MAX_RECEIVER_ID = 128;
  private static final AtomicLong STREAM_IDS = new AtomicLong();

  private final QueueEngine engine;
  private final ServerCallStreamObserver<ManagerMessage> out;
  private final StreamGuard.Session guard;
  private volatile Subscription sub;
  private boolean ended;

  private final ChannelOutlets channels;

  SubscribeCall(
      QueueEngine engine,
      ServerCallStreamObserver<ManagerMessage> out,
      StreamGuard.Session guard,
      ChannelOutlets channels) {
    this.engine = engine;
    this.channels = channels;
    this.out = out;
    this.guard = guard;
    out.setOnReadyHandler(
        () -> {
          Subscription s = sub;
          if (s != null) {
            engine.served().stream()
                .filter(q -> q.queue().equals(s.queue()))
                .forEach(q -> q.wake());
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
          Map<String, List<EventRef>> byShard = new LinkedHashMap<>();
          for (var r : guard.own(sub, m.getAcks().getEventsList())) {
            byShard
                .computeIfAbsent(r.getShard(), k -> new ArrayList<>())
                .add(new EventRef(r.getId(), r.getEpoch()));
          }
          byShard.forEach((shard, refs) -> engine.outcomes(sub.queue(), shard).acked(sub, refs));
          Map<String, List<EventRef>> committed = new LinkedHashMap<>();
          for (var r : m.getAcks().getCommittedList()) {
            committed
                .computeIfAbsent(r.getShard(), k -> new ArrayList<>())
                .add(new EventRef(r.getId(), r.getEpoch()));
          }
          committed.forEach(
              (shard, refs) -> engine.outcomes(sub.queue(), shard).committed(sub, refs));
        }
        case NACKS -> {
          requireSubscribed("nacks");
          List<Nack> own = guard.ownNacks(sub, m.getNacks().getNacksList());
          Map<String, List<Nack>> byShard =
              own.stream()
                  .collect(
                      Collectors.groupingBy(
                          n -> n.getEvent().getShard(), LinkedHashMap::new, Collectors.toList()));
          byShard.forEach(
              (shard, nacks) ->
                  engine.outcomes(sub.queue(), shard).nacked(sub, Subscription.coreNacks(nacks)));
        }
        case EXTENDS -> {
          requireSubscribed("extends");
          extend(m.getExtends().getExtendsList());
        }
        case FLOW -> {
          requireSubscribed("flow");
          sub.setMaxInFlight(guard.flow(checkMaxInFlight(m.getFlow().getMaxInFlight())));
          engine.served().stream()
              .filter(q -> q.queue().equals(sub.queue()))
              .forEach(q -> q.wake());
        }
        default ->
            throw Statuses.invalid("empty message: set subscribe, acks, nacks, flow or extends");
      }
    } catch (RuntimeException e) {
      fail(Statuses.of(e, where()).getStatus());
    }
  }

  /**
   * Deadline extensions, per shard (the shard's direct-acks thread writes them, {@code
   * QueueEngine.extend}); answered with ExtendResults once written. One the database could not take
   * is not answered: the receiver asks again.
   */
  private void extend(List<dev.sluice.proto.v1.Extend> asks) {
    Map<String, dev.sluice.proto.v1.Extend> byRef = new LinkedHashMap<>();
    for (dev.sluice.proto.v1.Extend x : asks) {
      byRef.put(x.getEvent().getShard() + "/" + x.getEvent().getId(), x);
    }
    Map<String, List<Extend>> byShard = new LinkedHashMap<>();
    for (var r : guard.own(sub, asks.stream().map(dev.sluice.proto.v1.Extend::getEvent).toList())) {
      dev.sluice.proto.v1.Extend x = byRef.get(r.getShard() + "/" + r.getId());
      byShard
          .computeIfAbsent(r.getShard(), k -> new ArrayList<>())
          .add(
              new Extend(
                  new EventRef(r.getId(), r.getEpoch()),
                  java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
                      Math.max(0, x.getExtendByMs())),
                  x.getTimeFiredNs()));
    }
    Subscription s = sub;
    byShard.forEach(
        (shard, refs) ->
            engine
                .extend(s.queue(), shard, refs)
                .thenAccept(answers -> s.extended(shard, answers)));
  }

  private void subscribe(Subscribe s) {
    if (sub != null) {
      throw Statuses.invalid("already subscribed to queue " + sub.queue() + " on this stream");
    }
    Statuses.checkQueueName(s.getQueue());
    if (s.getQueue().isBlank()) {
      throw Statuses.invalid("subscribe: queue is required");
    }
    String rid = s.getReceiverId();
    if (rid.isBlank() || rid.length() > MAX_RECEIVER_ID) {
      throw Statuses.invalid(
          "subscribe: receiver_id is required, at most " + MAX_RECEIVER_ID + " characters");
    }
    int max = checkMaxInFlight(s.getMaxInFlight());
    // Authorization first: a principal without the grant learns nothing about the queue.
    max = guard.subscribe(s.getQueue(), rid, max);
    KeyRange range;
    try {
      range = KeyRange.parse(s.getKeyRange());
    } catch (IllegalArgumentException e) {
      throw Statuses.invalid("subscribe: " + e.getMessage());
    }
    if (!engine.knows(s.getQueue())) {
      throw engine
          .problem(s.getQueue())
          .map(p -> Status.FAILED_PRECONDITION.withDescription(p).asRuntimeException())
          .orElseGet(
              () ->
                  Status.NOT_FOUND
                      .withDescription(
                          "queue '"
                              + s.getQueue()
                              + "' is not served here (known: "
                              + String.join(
                                  ", ",
                                  engine.knownNames().stream()
                                      .filter(guard.principal()::sees)
                                      .toList())
                              + ")")
                      .asRuntimeException());
    }
    if (!channels.acceptsReceivers(s.getQueue())) {
      throw Status.FAILED_PRECONDITION
          .withDescription(
              "queue '"
                  + s.getQueue()
                  + "' publishes to a channel ("
                  + channels.binding(s.getQueue()).describe()
                  + "); receivers may subscribe too only with channel_receivers=true")
          .asRuntimeException();
    }
    Subscription created =
        new Subscription(rid, s.getQueue(), range, STREAM_IDS.incrementAndGet(), max, out);
    guard.bind(created);
    String shards =
        engine.shards().stream()
            .filter(ShardManager::leading)
            .filter(x -> x.config().keyRange().overlaps(range))
            .map(ShardManager::name)
            .collect(Collectors.joining(","));
    created.send(
        ManagerMessage.newBuilder()
            .setSubscribed(
                Subscribed.newBuilder()
                    .setQueue(s.getQueue())
                    .setShard(shards)
                    .setReceiverId(rid)
                    .setMaxInFlight(max))
            .build());
    created.onCutOff(() -> engine.unsubscribe(created, "cut off: it does not read its stream"));
    sub = created;
    engine.subscribe(created, created.queue(), created.keyRange());
  }

  private static int checkMaxInFlight(int n) {
    if (n < 1 || n > MAX_IN_FLIGHT_LIMIT) {
      throw Statuses.invalid("max_in_flight must be 1.." + MAX_IN_FLIGHT_LIMIT + ", was " + n);
    }
    return n;
  }

  private void requireSubscribed(String what) {
    if (sub == null) {
      throw Statuses.invalid(what + " before subscribe: the first message must be a subscribe");
    }
  }

  private String where() {
    return sub == null ? "subscribe stream" : "queue " + sub.queue() + " " + sub;
  }

  private void fail(Status status) {
    ended = true;
    guard.close();
    if (sub != null) {
      sub.close(status);
      engine.unsubscribe(sub, "stream failed: " + status.getCode());
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
    guard.close();
    if (sub != null) {
      sub.markClosed();
      engine.unsubscribe(sub, "stream broke: " + Status.fromThrowable(t).getCode());
    }
  }

  @Override
  public void onCompleted() {
    if (ended) {
      // Already failed (and closed) by us: the receiver's half-close has nothing left to end.
      return;
    }
    ended = true;
    guard.close();
    if (sub != null) {
      sub.close(Status.OK);
      engine.unsubscribe(sub, "stream closed by receiver");
    } else {
      out.onCompleted();
    }
  }
}
