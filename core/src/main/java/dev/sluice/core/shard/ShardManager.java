package dev.sluice.core.shard;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.EngineConfig;
import dev.sluice.core.QueueListener;
import dev.sluice.core.Subscriptions;
import dev.sluice.core.binlog.BinlogState;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.loop.Ticker;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.EventStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything one manager runs for one shard, in parts that each own one thing:
 *
 * <ul>
 *   <li>{@link ShardPool}: the connection pool, the database clock and the {@code
 *       sluice-<shard>-maintenance} thread;
 *   <li>{@link ShardDiscovery}: the queue tables found (always, so receivers can subscribe to a
 *       standby) and the operators' pause switches, reconciled with the served queues;
 *   <li>{@link ShardLeadership} and {@link ShardHealth}: the lease (the {@link LeaseKeeper} on
 *       {@code sluice-<shard>-lease}) and why the shard is not served here;
 *   <li>{@link LeaderTerm}: fencing, the gate and the lease token of the current term;
 *   <li>{@link ServedQueues}: whether this process leads the shard and — only while it does — a
 *       {@link QueueManager} per valid queue table; its monitor is the shard's lock;
 *   <li>{@link TermWorkers}: what else lives for one term while it leads (recurring events, event
 *       groups, the binlog follower), begun and stopped with the term by {@link ServedQueues},
 *       halted, asked for faults and waited for by {@link ShardLeadership};
 *   <li>{@link QueueStops}: stopping many queues at once, with no lock held.
 * </ul>
 *
 * <p>This class wires them and is what the rest of the process talks to; it holds no lock of its
 * own. Locks, in the only order they are ever taken: the discovery's round lock, the shard's lock
 * (the {@link ServedQueues} monitor), a {@link QueueManager}'s monitor, then an outlet's (a
 * receiver stream's {@code Subscription}, told the shard stopped or started serving it). No thread
 * join and no database call is made under the shard's lock: a step-down takes the queues out under
 * it and stops them after letting go.
 */
public final class ShardManager {
  private static final Logger log = LoggerFactory.getLogger(ShardManager.class);

  private final ShardConfig config;
  private final EngineConfig manager;
  private final ShardPool pool;
  private final ShardHealth health;
  private final ServedQueues served;
  private final ShardDiscovery discovery;
  private final TermWorkers workers;
  private final ShardLeadership leadership;

  public ShardManager(
      ShardConfig config,
      EngineConfig manager,
      Clock clock,
      Ticker ticker,
      MeterRegistry registry,
      Subscriptions subscriptions,
      List<QueueListener> listeners,
      LeaseBalancer balancer,
      String instance) {
    this.config = config;
    this.manager = manager;
    this.pool = new ShardPool(config, clock, ticker, registry);
    this.health = new ShardHealth(config.name(), registry);
    this.served = new ServedQueues(config, manager, registry, subscriptions, listeners, pool);
    this.discovery = new ShardDiscovery(config, manager, registry, listeners, pool, served);
    this.workers =
        new TermWorkers(
            config,
            pool,
            registry,
            q -> discovery.table(q) != null,
            served::get,
            () -> served.all().values());
    this.leadership =
        new ShardLeadership(
            config, manager, balancer, instance, pool, health, discovery, served, workers);
    served.onFault(leadership.faults);
    served.termWorkers(workers);
  }

  public String name() {
    return config.name();
  }

  public ShardConfig config() {
    return config;
  }

  /** The shard's delivery-token key, or null until the shard was first reached. */
  public byte[] deliveryKey() {
    return discovery.deliveryKey();
  }

  /** Whether the shard's binlog is followed here (only while leading), and why not. */
  public BinlogState binlog() {
    return workers.binlog();
  }

  /** Whether this process holds the shard's lease and dispatches its queues. */
  public boolean leading() {
    return served.leading();
  }

  public void start() {
    pool.open();
    discover();
    long every = manager.discoveryInterval().toMillis();
    pool.maintenance().scheduleWithFixedDelay(this::discover, every, every, TimeUnit.MILLISECONDS);
    log.info("shard {}: started ({} queue tables found)", config.name(), discovery.names().size());
  }

  /**
   * Starts seeking the shard's lease: only once receivers can reach this process (the gRPC server
   * listens), so that a shard taken over is not left with no receiver attached.
   */
  public void seekLease() {
    leadership.seekLease();
  }

  /** One discovery round (see {@link ShardDiscovery#discover}); the maintenance thread's job. */
  public void discover() {
    discovery.discover();
  }

  // ---------------------------------------------------------------- leadership and health

  /** Steps down as when the lease is lost (see {@link ShardLeadership#stopLeading}). */
  public void stopLeading(String why) {
    leadership.stopLeading(why);
  }

  /** The lease keeper found the lease held by another live manager {@code owner}. */
  public void servedElsewhere(String owner) {
    leadership.servedElsewhere(owner);
  }

  /**
   * Why this shard is not served here for a fault: given up (a worker died) and not served again
   * yet, or refused because another live process uses this manager id. Null when none.
   */
  public String faultReason() {
    return health.reason();
  }

  /** Called (on any thread) when {@link #faultReason()} changes. */
  public void onHealthChange(Runnable r) {
    health.onChange(r);
  }

  // ---------------------------------------------------------------- lookups

  public QueueManager queue(String name) {
    return served.get(name);
  }

  public Map<String, QueueManager> queues() {
    return served.all();
  }

  /** Whether a valid queue table of that name exists on this shard (served here or not). */
  public boolean knows(String queue) {
    return discovery.table(queue) != null;
  }

  public Set<String> discoveredNames() {
    return discovery.names();
  }

  /**
   * The queue tables not served for a problem, with it. A table that discovery has just found valid
   * again is served before it leaves this map, so a listing that reads the served queues and then
   * this map never misses it; one served already is left out here, so it is never listed twice.
   */
  public Map<String, String> disabled() {
    Map<String, String> out = new java.util.LinkedHashMap<>(discovery.disabled());
    out.keySet().removeIf(q -> served.get(q) != null);
    return out;
  }

  public HikariDataSource dataSource() {
    return pool.dataSource();
  }

  /**
   * A store for a queue this process does not dispatch right now: acks and nacks for events it (or
   * another manager) fired still apply through the CAS. Null when the table is unknown.
   */
  public EventStore directStore(String queue) {
    return discovery.directStore(queue);
  }

  public QueueTable table(String queue) {
    return discovery.table(queue);
  }

  public DbClock clock() {
    return pool.clock();
  }

  // ---------------------------------------------------------------- stop

  /**
   * Stops in order: the lease keeper; no new fires (the gate) and the lease given up, so another
   * manager takes over at once; then every queue (each bounded: receivers finish, held events are
   * released); then the pool.
   */
  /**
   * A graceful stop's first step, while the shard is still served: this manager withdraws its
   * heartbeat, so the other live managers find their share grown and seek this shard's lease fast;
   * {@link #stop} then releases it and one of them takes it within a few milliseconds.
   *
   * @return whether another live manager may take the shard over
   */
  public boolean announceLeaving() {
    return leadership.announceLeaving();
  }

  public void stop() {
    if (!served.markStopped()) {
      return;
    }
    leadership.stopKeeper();
    // A planned hand-over: no new fires from here, and the lease is free before the queues drain,
    // so the next manager takes the shard at its next round instead of after the drain. What our
    // receivers still hold is acked here through the CAS (or released) meanwhile. The term's
    // workers were told to stop when the shard was marked stopped; their last writes end before
    // the lease is given up.
    served.term().close();
    leadership.awaitTermWorkers();
    // What the queues still write (acks of what receivers hold, releases) is no longer a leader's:
    // unfenced, as a non-leader's acks are, so that the next leader's take does not refuse it.
    Map<String, QueueManager> queues = served.all();
    queues.values().forEach(q -> q.handOver(pool.unfenced(q.table())));
    leadership.resign();
    pool.shutdownMaintenance();
    QueueStops.stop(queues.values(), manager.shutdownTimeout());
    served.clearAfterStop();
    pool.close();
    log.info("shard {}: stopped", config.name());
  }

  /** For tests and status: how long this process has led the shard, or zero. */
  public Duration leadingFor() {
    return served.leadingFor();
  }

  /**
   * For tests in this package: the shard's lock (the {@link ServedQueues} monitor), to hold as a
   * long discovery round's apply step does. Nothing else may take it from outside.
   */
  Object lockForTests() {
    return served;
  }
}
