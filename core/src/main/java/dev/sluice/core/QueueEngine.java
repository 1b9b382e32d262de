package dev.sluice.core;

import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.loop.Ticker;
import dev.sluice.core.outlet.Extend;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletOutcomes;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.shard.DirectAcks;
import dev.sluice.core.shard.Extensions;
import dev.sluice.core.shard.LeaseBalancer;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.KeyRange;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.OperatorStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The shard managers of this process, the outlets subscribed to its queues, and the routing between
 * them: a subscribed outlet is attached to the queue's manager on every shard this process leads
 * whose key range overlaps it; outcomes go back to the shard the event came from.
 */
public final class QueueEngine {
  private final List<ShardManager> shards = new ArrayList<>();
  private final Subscriptions subscriptions = new Subscriptions();

  /** Outcomes for queues this process does not dispatch: each shard's direct-acks thread. */
  private final DirectAcks direct = new DirectAcks();

  private final Extensions extensions;

  private final List<QueueListener> listeners = new CopyOnWriteArrayList<>();

  /** The longest {@link #handOverWait}, whatever the lease's timing. */
  static final Duration MAX_HAND_OVER_WAIT = Duration.ofSeconds(1);

  /** How long a graceful stop serves on after it withdrew its heartbeat (see {@link #stop}). */
  private final Duration handOverWait;

  public QueueEngine(EngineConfig config, Clock clock, MeterRegistry registry) {
    this(config, clock, Ticker.SYSTEM, registry);
  }

  /**
   * @param clock the host's wall clock (read only until each shard's database clock is measured)
   * @param ticker monotonic time for every pause, deadline and age (a test may move it by hand)
   */
  public QueueEngine(EngineConfig config, Clock clock, Ticker ticker, MeterRegistry registry) {
    this.extensions = new Extensions(direct, registry);
    Duration wait = config.leaseTtl().dividedBy(3).plus(config.leaseRenew().dividedBy(2));
    this.handOverWait = wait.compareTo(MAX_HAND_OVER_WAIT) > 0 ? MAX_HAND_OVER_WAIT : wait;
    LeaseBalancer balancer = new LeaseBalancer(config.shards().size());
    // This process among any others started with the same manager id (see LeaseKeeper).
    String instance = Long.toHexString(new java.security.SecureRandom().nextLong());
    for (ShardConfig s : config.shards()) {
      shards.add(
          new ShardManager(
              s, config, clock, ticker, registry, subscriptions, listeners, balancer, instance));
    }
  }

  /** Adds a listener to every queue's life on every shard; call before {@link #start}. */
  public void listen(QueueListener l) {
    listeners.add(l);
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

  /**
   * Stops every shard in parallel; each stop is bounded. Then closes every subscribed outlet.
   *
   * <p>A planned hand-over first: when another manager is live, this one withdraws its heartbeat
   * and goes on serving for {@link #handOverWait} (a third of the lease's ttl, the others'
   * heartbeat period, and half a renew period; a second at most: 917 ms with the default lease
   * timing), so that they count one fewer manager and seek the shards fast; the shards are then
   * stopped and their leases released, and the deliveries of each pause for its stop and a few
   * milliseconds, not for the others' next heartbeat and renewal.
   */
  public void stop() {
    boolean others = false;
    for (ShardManager s : shards) {
      others |= s.announceLeaving();
    }
    if (others) {
      try {
        Thread.sleep(handOverWait.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    shards.parallelStream().forEach(ShardManager::stop);
    direct.stop();
    for (Subscriptions.Subscription s : subscriptions.all()) {
      s.outlet().close("manager is stopping; reconnect");
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
   * @throws EngineException INVALID_ARGUMENT without a shard when there are several, NOT_FOUND for
   *     an unknown shard or a queue that shard does not have, FAILED_PRECONDITION for a queue that
   *     is not served for a problem
   */
  public Map<Long, CasOutcome> cancel(String queue, String shardName, Collection<Long> ids) {
    return cancel(queue, shardName, ids, t -> true);
  }

  /**
   * {@link #cancel(String, String, Collection)} of the events whose tenant {@code tenantAllowed}
   * accepts; the others are answered UNKNOWN, as ids that do not exist, and not changed.
   */
  public Map<Long, CasOutcome> cancel(
      String queue,
      String shardName,
      Collection<Long> ids,
      java.util.function.Predicate<String> tenantAllowed) {
    ShardManager s;
    if (shardName.isEmpty()) {
      if (shards.size() != 1) {
        throw new EngineException(
            EngineException.Kind.INVALID_ARGUMENT,
            "cancel: this manager has several shards ("
                + String.join(", ", shards.stream().map(ShardManager::name).toList())
                + "); name the shard of the events (event ids are unique per shard only)");
      }
      s = shards.get(0);
    } else {
      s =
          shard(shardName)
              .orElseThrow(
                  () ->
                      new EngineException(
                          EngineException.Kind.NOT_FOUND,
                          "cancel: no shard named '" + shardName + "' here"));
    }
    QueueManager q = s.queue(queue);
    if (q != null) {
      return q.cancel(ids, tenantAllowed);
    }
    OperatorStore store = s.directStore(queue);
    if (store == null) {
      throw problem(queue)
          .map(p -> new EngineException(EngineException.Kind.FAILED_PRECONDITION, p))
          .orElseGet(
              () ->
                  new EngineException(
                      EngineException.Kind.NOT_FOUND,
                      "queue '" + queue + "' is not known on shard " + s.name()));
    }
    s.clock().sync(store::serverTimeNs);
    return store.cancel(ids, s.clock().nowNs(), tenantAllowed);
  }

  // ---------------------------------------------------------------- outlets

  /**
   * Attaches {@code outlet} to {@code queue} on every shard led here whose key range overlaps
   * {@code keyRange}, now and whenever such a shard starts serving the queue, until {@link
   * #unsubscribe}.
   */
  public void subscribe(Outlet outlet, String queue, KeyRange keyRange) {
    subscriptions.add(new Subscriptions.Subscription(outlet, queue, keyRange));
    for (ShardManager s : shards) {
      QueueManager q = s.queue(queue);
      if (q != null && keyRange.overlaps(s.config().keyRange())) {
        q.attach(outlet);
      }
    }
  }

  /** Detaches a subscribed outlet everywhere; what it holds is released at once. */
  public void unsubscribe(Outlet outlet, String why) {
    Subscriptions.Subscription sub = subscriptions.remove(outlet);
    if (sub == null) {
      return;
    }
    for (ShardManager s : shards) {
      QueueManager q = s.queue(sub.queue());
      if (q != null) {
        q.detach(outlet, why);
      }
    }
  }

  /**
   * Stops new sends to every subscribed outlet with id {@code id} opened by {@code principal}
   * (another principal's outlets with the same id are left alone); returns how many that was.
   */
  public int drainReceiver(String id, String principal) {
    int n = 0;
    for (Subscriptions.Subscription s : subscriptions.all()) {
      if (s.outlet().id().equals(id) && s.outlet().principal().equals(principal)) {
        s.outlet().drain();
        n++;
      }
    }
    return n;
  }

  /**
   * Where an outlet's outcomes for {@code queue}'s events from {@code shardName} go: the queue's
   * manager on that shard when this process dispatches it, else straight to the table through the
   * CAS (the events were fired by this process before it lost the lease, or by another). An empty
   * shard name means the only shard.
   */
  public OutletOutcomes outcomes(String queue, String shardName) {
    return new OutletOutcomes() {
      @Override
      public void acked(Outlet from, List<EventRef> refs) {
        route(from, queue, shardName, refs, List.of(), List.of(), null);
      }

      @Override
      public void committed(Outlet from, List<EventRef> refs) {
        ShardManager s = shardNamed(shardName);
        QueueManager q = s == null ? null : s.queue(queue);
        if (q != null) {
          q.outcomes().committed(from, refs);
        }
      }

      @Override
      public void nacked(Outlet from, List<Nack> nacks) {
        route(from, queue, shardName, List.of(), nacks, List.of(), null);
      }

      @Override
      public void released(Outlet from, List<EventRef> refs, String why) {
        route(from, queue, shardName, List.of(), List.of(), refs, why);
      }
    };
  }

  /**
   * Moves the deadlines of fired events a receiver holds ({@link Extensions}): on the shard they
   * came from, whether this process leads it or not. The future completes with one answer per ask,
   * or exceptionally when the database could not be written (the receiver asks again).
   */
  public java.util.concurrent.CompletableFuture<List<Extend.Answer>> extend(
      String queue, String shardName, List<Extend> asks) {
    return extensions.extend(shardNamed(shardName), queue, asks);
  }

  private ShardManager shardNamed(String shardName) {
    return shardName.isEmpty() && shards.size() == 1
        ? shards.get(0)
        : shard(shardName).orElse(null);
  }

  /**
   * Applies outcomes on the shard the events came from: through the queue's manager when this
   * process dispatches it, else straight to the table ({@link DirectAcks}).
   */
  private void route(
      Outlet from,
      String queue,
      String shardName,
      List<EventRef> acks,
      List<Nack> nacks,
      List<EventRef> releases,
      String why) {
    direct.route(shardNamed(shardName), from, queue, shardName, acks, nacks, releases, why);
  }
}
