package dev.sluice.manager.grpc;

import com.google.protobuf.ByteString;
import dev.sluice.core.loop.Backoff;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.Settled;
import dev.sluice.db.KeyRange;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.store.EventRef;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.StreamGuard;
import dev.sluice.manager.security.StreamGuard.Binding;
import dev.sluice.proto.v1.AckResult;
import dev.sluice.proto.v1.AckResults;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.ShardChange;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One receiver's Subscribe stream: its identity, credits and the gRPC call, as the core's {@link
 * Outlet}. It is attached to the queue's manager on every shard this process leads whose key range
 * overlaps the subscription's (the core keeps one {@code AttachedOutlet} per shard for it), and all
 * of them share its credits.
 *
 * <p>Threads: credits are atomics shared by the shards' dispatcher threads; flags are volatile;
 * writes to the gRPC call are serialized by {@link #send} and {@link #close} (gRPC observers are
 * not thread-safe).
 *
 * <p>A receiver that does not read its stream: events honor {@code isReady()} (no free credits
 * while the call is not ready), but the answers to its acks are owed whatever it reads, and gRPC
 * queues every message written. So the ack results written while the call was not ready are
 * counted, and past {@link #MAX_UNREAD_RESULT_BYTES} the stream is cut off with RESOURCE_EXHAUSTED
 * and {@link #onCutOff} runs (the engine detaches it, so its in-flight events are released).
 */
public final class Subscription implements Outlet, StreamGuard.Stream {
  private static final Logger log = LoggerFactory.getLogger(Subscription.class);

  /**
   * The most bytes of ack results queued to a receiver that is not reading: 1 MiB, some 50,000
   * answers (about 20 bytes each), five times what a receiver at max_in_flight 10,000 can be owed
   * at once.
   */
  public static final long MAX_UNREAD_RESULT_BYTES = 1024 * 1024;

  private final String receiverId;
  private final String queue;
  private final KeyRange keyRange;
  private final long streamId;
  private final ServerCallStreamObserver<ManagerMessage> out;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Map<String, AtomicInteger> classInFlight = new ConcurrentHashMap<>();

  /** Shards this subscription is attached to in this process. */
  private final java.util.Set<String> shards = ConcurrentHashMap.newKeySet();

  private volatile int maxInFlight;
  private volatile Binding binding;
  private volatile boolean draining;
  private volatile boolean closed;

  /** The server has ended the call; guarded by this. */
  private boolean ended;

  /** Bytes of ack results written since the call was last ready; guarded by this. */
  private long unreadResultBytes;

  /** Run once when the stream is cut off for not reading (set by the gRPC layer). */
  private volatile Runnable onCutOff = () -> {};

  public Subscription(
      String receiverId,
      String queue,
      KeyRange keyRange,
      long streamId,
      int maxInFlight,
      ServerCallStreamObserver<ManagerMessage> out) {
    this.receiverId = receiverId;
    this.queue = queue;
    this.keyRange = keyRange;
    this.streamId = streamId;
    this.maxInFlight = maxInFlight;
    this.out = out;
  }

  public String receiverId() {
    return receiverId;
  }

  @Override
  public String id() {
    return receiverId;
  }

  /** Set once, before the subscription is attached to any shard. */
  @Override
  public void bind(Binding b) {
    this.binding = b;
  }

  /** The principal that opened the stream ("anonymous" when unbound). */
  @Override
  public String principal() {
    Binding b = binding;
    return b == null ? Principal.ANONYMOUS.name() : b.principal();
  }

  /** Whether this stream may be sent events of {@code tenant}. */
  @Override
  public boolean acceptsTenant(String tenant) {
    Binding b = binding;
    return b == null || b.tenants() == null || b.tenants().contains(tenant);
  }

  /** The token binding one delivery to this stream's principal and receiver id. */
  public ByteString deliveryToken(String shard, long id, long epoch) {
    Binding b = binding;
    if (b == null || b.tokens() == null) {
      return ByteString.EMPTY;
    }
    return b.tokens().sign(shard, queue, id, epoch, b.principal(), receiverId);
  }

  public String queue() {
    return queue;
  }

  public KeyRange keyRange() {
    return keyRange;
  }

  @Override
  public long streamId() {
    return streamId;
  }

  /** Tells the receiver that {@code shard} now serves (or no longer serves) its queue. */
  @Override
  public void shardChanged(String shard, boolean serving) {
    if (serving) {
      shards.add(shard);
    } else {
      shards.remove(shard);
    }
    send(
        ManagerMessage.newBuilder()
            .setShardChange(
                ShardChange.newBuilder().setQueue(queue).setShard(shard).setServing(serving))
            .build());
  }

  /**
   * Sends fired events, encoded for the wire (typed column values and a delivery token each), in
   * messages of at most {@link QueueOptions#MAX_MESSAGE_BYTES}. A failed send leaves them in
   * flight: the stream's close releases them at once. A shard's dispatcher thread.
   */
  @Override
  public void deliver(String shard, List<Delivery> batch) {
    OutgoingBatches messages = new OutgoingBatches(QueueOptions.MAX_MESSAGE_BYTES);
    for (Delivery d : batch) {
      messages.add(toWire(d));
    }
    for (ManagerMessage m : messages.all()) {
      if (!send(m)) {
        return;
      }
    }
  }

  private Event toWire(Delivery d) {
    Event.Builder e = Event.newBuilder();
    if (d.orderingKey() != null) {
      e.setOrderingKey(d.orderingKey());
    }
    if (d.group() != null) {
      e.setGroup(
          dev.sluice.proto.v1.GroupOutcome.newBuilder()
              .setKey(d.group().key())
              .setAcked(d.group().acked())
              .setDead(d.group().dead())
              .setCancelled(d.group().cancelled()));
    }
    e.setId(d.id())
        .setEpoch(d.epoch())
        .setQueue(d.queue())
        .setShard(d.shard())
        .setTenant(d.tenant())
        .setPriority(d.priority())
        .setTimeDueNs(d.dueNs())
        .setTimeCreatedNs(d.createdNs())
        .setTimeFiredNs(d.firedNs())
        .setLastAttempt(d.lastAttempt())
        .setTimeDeadlineNs(d.deadlineNs());
    // Straight into the builder's map: no intermediate map of converted values per event.
    for (Map.Entry<String, Object> c : d.columns().entrySet()) {
      e.putColumns(c.getKey(), Values.toWire(c.getValue()));
    }
    ByteString token = deliveryToken(d.shard(), d.id(), d.epoch());
    if (!token.isEmpty()) {
      e.setDeliveryToken(token);
    }
    return e.build();
  }

  /** The answers to this receiver's acks and nacks (an {@code AckResults} message). */
  @Override
  public void settled(String shard, List<Settled> results) {
    AckResults.Builder b = AckResults.newBuilder();
    for (Settled r : results) {
      b.addResults(
          AckResult.newBuilder()
              .setEvent(
                  dev.sluice.proto.v1.EventRef.newBuilder()
                      .setId(r.ref().id())
                      .setEpoch(r.ref().epoch())
                      .setShard(shard))
              .setStatus(
                  switch (r.outcome()) {
                    case APPLIED -> AckStatus.ACK_STATUS_OK;
                    case STALE -> AckStatus.ACK_STATUS_STALE;
                    case UNKNOWN -> AckStatus.ACK_STATUS_UNKNOWN;
                  })
              .setOutcome(r.result() == null ? "" : r.result().name()));
    }
    send(ManagerMessage.newBuilder().setAckResults(b).build());
  }

  /** The answers to this receiver's deadline extensions (an {@code ExtendResults} message). */
  void extended(String shard, List<dev.sluice.core.outlet.Extend.Answer> answers) {
    dev.sluice.proto.v1.ExtendResults.Builder b = dev.sluice.proto.v1.ExtendResults.newBuilder();
    for (dev.sluice.core.outlet.Extend.Answer a : answers) {
      b.addResults(
          dev.sluice.proto.v1.ExtendResult.newBuilder()
              .setEvent(
                  dev.sluice.proto.v1.EventRef.newBuilder()
                      .setId(a.ref().id())
                      .setEpoch(a.ref().epoch())
                      .setShard(shard))
              .setStatus(
                  switch (a.status()) {
                    case OK -> dev.sluice.proto.v1.ExtendStatus.EXTEND_STATUS_OK;
                    case STALE -> dev.sluice.proto.v1.ExtendStatus.EXTEND_STATUS_STALE;
                    case UNKNOWN -> dev.sluice.proto.v1.ExtendStatus.EXTEND_STATUS_UNKNOWN;
                    case LIMIT -> dev.sluice.proto.v1.ExtendStatus.EXTEND_STATUS_LIMIT;
                  })
              .setTimeDeadlineNs(a.deadlineNs()));
    }
    send(ManagerMessage.newBuilder().setExtendResults(b).build());
  }

  /** The manager is stopping: the receiver reconnects, to this manager or another. */
  @Override
  public void close(String why) {
    close(Status.UNAVAILABLE.withDescription(why));
  }

  /** A receiver's nacks as the core takes them. */
  static List<Nack> coreNacks(List<dev.sluice.proto.v1.Nack> nacks) {
    List<Nack> out = new ArrayList<>(nacks.size());
    for (dev.sluice.proto.v1.Nack n : nacks) {
      out.add(
          new Nack(
              new EventRef(n.getEvent().getId(), n.getEvent().getEpoch()),
              Backoff.msToNs(n.getRetryAfterMs()),
              n.getReason(),
              n.getSnooze()));
    }
    return out;
  }

  @Override
  public int maxInFlight() {
    return maxInFlight;
  }

  public void setMaxInFlight(int n) {
    this.maxInFlight = n;
  }

  public int inFlight() {
    return inFlight.get();
  }

  @Override
  public boolean draining() {
    return draining;
  }

  /** Stops new sends (graceful receiver shutdown); in-flight events may still be acked. */
  @Override
  public void drain() {
    this.draining = true;
  }

  @Override
  public boolean closed() {
    return closed;
  }

  /** Free credits right now. */
  @Override
  public int free() {
    if (closed || draining || !out.isReady()) {
      return 0;
    }
    return Math.max(0, maxInFlight - inFlight.get());
  }

  /** Takes one credit if one is free; shards racing for the last credit cannot both win. */
  @Override
  public boolean tryReserve(String workClass) {
    while (true) {
      int n = inFlight.get();
      if (closed || draining || n >= maxInFlight) {
        return false;
      }
      if (inFlight.compareAndSet(n, n + 1)) {
        classInFlight.computeIfAbsent(workClass, k -> new AtomicInteger()).incrementAndGet();
        return true;
      }
    }
  }

  @Override
  public void unreserve(String workClass) {
    inFlight.decrementAndGet();
    AtomicInteger c = classInFlight.get(workClass);
    if (c != null) {
      c.decrementAndGet();
    }
  }

  @Override
  public int classInFlight(String workClass) {
    AtomicInteger c = classInFlight.get(workClass);
    return c == null ? 0 : c.get();
  }

  /** What to run when the stream is cut off for not reading (detach it everywhere). */
  public void onCutOff(Runnable r) {
    this.onCutOff = r;
  }

  /**
   * Sends one message; returns false when the stream is gone, or was just cut off because the
   * receiver does not read its ack results (then {@link #onCutOff} runs, outside the lock).
   */
  public boolean send(ManagerMessage m) {
    Status cutOff = null;
    synchronized (this) {
      if (closed) {
        return false;
      }
      if (m.hasAckResults()) {
        if (out.isReady()) {
          unreadResultBytes = 0;
        } else {
          unreadResultBytes += m.getSerializedSize();
          if (unreadResultBytes > MAX_UNREAD_RESULT_BYTES) {
            cutOff =
                Status.RESOURCE_EXHAUSTED.withDescription(
                    "receiver "
                        + receiverId
                        + " does not read its stream: more than "
                        + MAX_UNREAD_RESULT_BYTES
                        + " bytes of ack results unread on queue "
                        + queue
                        + "; its in-flight events are released");
          }
        }
      }
      if (cutOff == null) {
        try {
          out.onNext(m);
          return true;
        } catch (RuntimeException e) {
          log.debug(
              "queue {}: receiver {} stream {} send failed: {}",
              queue,
              receiverId,
              streamId,
              e.toString());
          closed = true;
          return false;
        }
      }
    }
    log.warn("queue {}: {}: cutting it off", queue, cutOff.getDescription());
    close(cutOff);
    onCutOff.run();
    return false;
  }

  /**
   * Ends the call from the server side with a status (e.g. the manager is stopping, or OK after the
   * receiver half-closed). Ends it once, even if the stream was already marked closed.
   */
  public synchronized void close(Status status) {
    closed = true;
    if (ended) {
      return;
    }
    ended = true;
    try {
      if (status.isOk()) {
        out.onCompleted();
      } else {
        out.onError(status.asRuntimeException());
      }
    } catch (RuntimeException e) {
      log.debug("queue {}: closing stream {}: {}", queue, streamId, e.toString());
    }
  }

  /** The client side ended or broke the stream: no more sends. */
  public void markClosed() {
    closed = true;
  }

  @Override
  public String toString() {
    return "receiver " + receiverId + " (stream " + streamId + ")";
  }
}
