package dev.sluice.manager;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.Release;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.manager.config.ShardConfig;
import dev.sluice.manager.queue.Backoff;
import dev.sluice.manager.queue.QueueManager;
import dev.sluice.manager.queue.Subscription;
import dev.sluice.proto.v1.AckResult;
import dev.sluice.proto.v1.AckResults;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Nack;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shard managers of this process, the live subscriptions, and the routing between them: a
 * subscription is attached to the queue's manager on every shard this process leads whose key range
 * overlaps it; acks go back to the shard the event came from.
 */
public final class QueueEngine {
  private static final Logger log = LoggerFactory.getLogger(QueueEngine.class);
  private final List<ShardManager> shards = new ArrayList<>();
  private final Subscriptions subscriptions = new Subscriptions();

  /** Per shard: the thread applying acks for shards this process does not lead. */
  private final Map<String, ScheduledExecutorService> directWriters = new ConcurrentHashMap<>();

  public QueueEngine(ManagerConfig config, Clock clock, MeterRegistry registry) {
    LeaseBalancer balancer = new LeaseBalancer(config.shards().size());
    // This process among any others started with the same manager id (see LeaseKeeper).
    String instance = Long.toHexString(new java.security.SecureRandom().nextLong());
    for (ShardConfig s : config.shards()) {
      shards.add(new ShardManager(s, config, clock, registry, subscriptions, balancer, instance));
    }
  }

  /** Opens the shards' pools and discovers their queues; leases are sought by {@link #lead}. */
  public void start() {
    for (ShardManager s : shards) {
      s.start();
    }
  }

  /** Starts seeking shard leases: call once receivers can connect (the gRPC server listens). */
  public void lead() {
    for (ShardManager s : shards) {
      s.seekLease();
    }
  }

  /** Stops every shard in parallel; each stop is bounded. Then ends every receiver's call. */
  public void stop() {
    shards.parallelStream().forEach(ShardManager::stop);
    directWriters.values().forEach(ScheduledExecutorService::shutdownNow);
    for (Subscription s : subscriptions.all()) {
      s.close(io.grpc.Status.UNAVAILABLE.withDescription("manager is stopping; reconnect"));
    }
  }

  /** Shards given up for a fault and not served again yet, with the reason. */
  public Map<String, String> faults() {
    Map<String, String> out = new java.util.TreeMap<>();
    for (ShardManager s : shards) {
      String f = s.faultReason();
      if (f != null) {
        out.put(s.name(), f);
      }
    }
    return out;
  }

  /** Called (on any thread) when {@link #faults()} changes. */
  public void onHealthChange(Runnable r) {
    shards.forEach(s -> s.onHealthChange(r));
  }

  public List<ShardManager> shards() {
    return List.copyOf(shards);
  }

  public Optional<ShardManager> shard(String name) {
    return shards.stream().filter(s -> s.name().equals(name)).findFirst();
  }

  /** The manager of a queue on the first shard this process dispatches it for. */
  public Optional<QueueManager> find(String queue) {
    for (ShardManager s : shards) {
      QueueManager q = s.queue(queue);
      if (q != null) {
        return Optional.of(q);
      }
    }
    return Optional.empty();
  }

  /** Whether some shard has a valid table for this queue (led here or not). */
  public boolean knows(String queue) {
    return shards.stream().anyMatch(s -> s.knows(queue));
  }

  /** Why a queue is not served, if some shard found it malformed. */
  public Optional<String> problem(String queue) {
    for (ShardManager s : shards) {
      String p = s.disabled().get(queue);
      if (p != null) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /** Every queue this process dispatches, on every shard it leads. */
  public List<QueueManager> served() {
    List<QueueManager> out = new ArrayList<>();
    for (ShardManager s : shards) {
      out.addAll(s.queues().values());
    }
    out.sort(Comparator.comparing(QueueManager::queue).thenComparing(QueueManager::shard));
    return out;
  }

  /** Sorted names of every known queue. */
  public List<String> knownNames() {
    return shards.stream().flatMap(s -> s.discoveredNames().stream()).distinct().sorted().toList();
  }

  /**
   * pending → cancelled on one shard's table. Ids are unique per shard only, so the shard must be
   * named unless this process has just one. Through the queue's manager when this process leads the
   * shard (so the events also leave its window), else straight through the CAS: the leader's fire
   * then fails its guard and drops them.
   *
   * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT without a shard when there are several,
   *     NOT_FOUND for an unknown shard or a queue that shard does not have
   */
  public Map<Long, CasOutcome> cancel(String queue, String shardName, Collection<Long> ids) {
    ShardManager s;
    if (shardName.isEmpty()) {
      if (shards.size() != 1) {
        throw io.grpc.Status.INVALID_ARGUMENT
            .withDescription(
                "cancel: this manager has several shards ("
                    + String.join(", ", shards.stream().map(ShardManager::name).toList())
                    + "); name the shard of the events (event ids are unique per shard only)")
            .asRuntimeException();
      }
      s = shards.get(0);
    } else {
      s =
          shard(shardName)
              .orElseThrow(
                  () ->
                      io.grpc.Status.NOT_FOUND
                          .withDescription("cancel: no shard named '" + shardName + "' here")
                          .asRuntimeException());
    }
    QueueManager q = s.queue(queue);
    if (q != null) {
      return q.cancel(ids);
    }
    EventStore store = s.directStore(queue);
    if (store == null) {
      throw problem(queue)
          .map(p -> io.grpc.Status.FAILED_PRECONDITION.withDescription(p).asRuntimeException())
          .orElseGet(
              () ->
                  io.grpc.Status.NOT_FOUND
                      .withDescription("queue '" + queue + "' is not known on shard " + s.name())
                      .asRuntimeException());
    }
    s.clock().sync(store::serverTimeNs);
    return store.cancel(ids, s.clock().nowNs());
  }

  // ---------------------------------------------------------------- subscriptions

  public void subscribe(Subscription sub) {
    subscriptions.add(sub);
    for (ShardManager s : shards) {
      QueueManager q = s.queue(sub.queue());
      if (q != null && sub.keyRange().overlaps(s.config().keyRange())) {
        q.attach(sub);
      }
    }
  }

  public void unsubscribe(Subscription sub, String why) {
    subscriptions.remove(sub);
    for (ShardManager s : shards) {
      QueueManager q = s.queue(sub.queue());
      if (q != null) {
        q.detach(sub, why);
      }
    }
  }

  /**
   * Stops new sends to every stream of a receiver id opened by {@code principal} (another
   * principal's streams with the same id are left alone); returns how many streams that was.
   */
  public int drainReceiver(String receiverId, String principal) {
    int n = 0;
    for (Subscription s : subscriptions.all()) {
      if (s.receiverId().equals(receiverId) && s.principal().equals(principal)) {
        s.drain();
        n++;
      }
    }
    return n;
  }

  /**
   * Applies acks (or nacks) on the shard the events came from: through its queue manager when this
   * process dispatches it, else directly through the CAS (the events were fired by this process
   * before it lost the lease, or by another).
   *
   * <p>Direct writes run on the shard's own {@code sluice-<shard>-direct-acks} thread, never on the
   * gRPC thread, and one that fails (the database is down) is retried with backoff until it applies
   * or the stream ends — it never fails the receiver's stream, which would release everything the
   * receiver holds from every shard of this process. Answers are sent once applied; the receiver
   * sends again on its next stream what a broken one left unanswered.
   */
  public void route(Subscription sub, String shardName, List<EventRef> acks, List<Nack> nacks) {
    ShardManager s =
        shardName.isEmpty() && shards.size() == 1 ? shards.get(0) : shard(shardName).orElse(null);
    if (s == null) {
      answerUnknown(sub, shardName, acks, nacks);
      return;
    }
    QueueManager q = s.queue(sub.queue());
    if (q != null) {
      if (!acks.isEmpty()) {
        q.onAcks(sub, acks);
      }
      if (!nacks.isEmpty()) {
        q.onNacks(sub, nacks);
      }
      return;
    }
    EventStore store = s.directStore(sub.queue());
    if (store == null) {
      answerUnknown(sub, s.name(), acks, nacks);
      return;
    }
    direct(s).execute(() -> applyDirect(sub, s, store, acks, nacks, 0));
  }

  /**
   * Acks the receiver applied and committed in its own transaction: the queue manager of the shard
   * lets go of them (no UPDATE, no answer). Not led here: nothing to do, the row already says
   * acked.
   */
  public void committed(Subscription sub, String shardName, List<EventRef> refs) {
    ShardManager s =
        shardName.isEmpty() && shards.size() == 1 ? shards.get(0) : shard(shardName).orElse(null);
    QueueManager q = s == null ? null : s.queue(sub.queue());
    if (q != null) {
      q.onCommitted(sub, refs);
    }
  }

  private ScheduledExecutorService direct(ShardManager s) {
    return directWriters.computeIfAbsent(
        s.name(),
        n ->
            Executors.newSingleThreadScheduledExecutor(
                r -> {
                  Thread t = new Thread(r, "sluice-" + n + "-direct-acks");
                  t.setDaemon(true);
                  return t;
                }));
  }

  private void applyDirect(
      Subscription sub,
      ShardManager s,
      EventStore store,
      List<EventRef> acks,
      List<Nack> nacks,
      int failures) {
    if (sub.closed()) {
      return; // the receiver sends them again on its next stream
    }
    AckResults.Builder b = AckResults.newBuilder();
    try {
      s.clock().sync(store::serverTimeNs);
      long now = s.clock().nowNs();
      if (!acks.isEmpty()) {
        Map<EventRef, CasOutcome> out = store.ack(acks, now);
        acks.forEach(r -> b.addResults(result(r, s.name(), out.get(r), "ACKED")));
      }
      if (!nacks.isEmpty()) {
        var table = s.table(sub.queue());
        List<Release> rel = new ArrayList<>();
        for (Nack n : nacks) {
          EventRef r = new EventRef(n.getEvent().getId(), n.getEvent().getEpoch());
          Backoff policy = new Backoff(table.options().minBackoff(), table.options().maxBackoff());
          long delay =
              Math.max(
                  policy.retryAfterNs(n.getRetryAfterMs()), table.options().minBackoff().toNanos());
          int max = table.options().maxAttempts();
          boolean dead = r.epoch() >= max && r.epoch() % max == 0;
          String why =
              "max_attempts "
                  + max
                  + " reached; last attempt: nack"
                  + (n.getReason().isEmpty() ? "" : ": " + n.getReason());
          rel.add(new Release(r, Backoff.at(now, delay), dead, dead ? why : null));
        }
        Map<EventRef, CasOutcome> out = store.release(rel);
        rel.forEach(
            r ->
                b.addResults(
                    result(r.ref(), s.name(), out.get(r.ref()), r.dead() ? "DEAD" : "RETRY")));
      }
    } catch (RuntimeException e) {
      // A release that half applied is harmless to redo: each row is a CAS on its epoch, and a
      // row already changed answers STALE.
      long pauseMs = Math.min(5_000, 100L << Math.min(failures, 6));
      log.warn(
          "shard {}: applying {} acks and {} nacks of {} directly failed ({} in a row), retrying"
              + " in {} ms: {}",
          s.name(),
          acks.size(),
          nacks.size(),
          sub,
          failures + 1,
          pauseMs,
          e.toString());
      try {
        direct(s)
            .schedule(
                () -> applyDirect(sub, s, store, acks, nacks, failures + 1),
                pauseMs,
                TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException stopping) {
        // The manager is stopping: the receiver sends them again to whoever serves next.
      }
      return;
    }
    sub.send(ManagerMessage.newBuilder().setAckResults(b).build());
  }

  private static AckResult result(EventRef r, String shard, CasOutcome o, String outcome) {
    return AckResult.newBuilder()
        .setEvent(
            dev.sluice.proto.v1.EventRef.newBuilder()
                .setId(r.id())
                .setEpoch(r.epoch())
                .setShard(shard))
        .setStatus(
            o == CasOutcome.APPLIED
                ? AckStatus.ACK_STATUS_OK
                : o == CasOutcome.STALE ? AckStatus.ACK_STATUS_STALE : AckStatus.ACK_STATUS_UNKNOWN)
        .setOutcome(o == CasOutcome.APPLIED ? outcome : "")
        .build();
  }

  private static void answerUnknown(
      Subscription sub, String shard, List<EventRef> acks, List<Nack> nacks) {
    AckResults.Builder b = AckResults.newBuilder();
    acks.forEach(r -> b.addResults(result(r, shard, CasOutcome.UNKNOWN, "")));
    nacks.forEach(
        n ->
            b.addResults(
                result(
                    new EventRef(n.getEvent().getId(), n.getEvent().getEpoch()),
                    shard,
                    CasOutcome.UNKNOWN,
                    "")));
    sub.send(ManagerMessage.newBuilder().setAckResults(b).build());
  }
}
