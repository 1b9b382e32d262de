package dev.sluice.manager;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueControl;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueTable;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.db.store.JdbcLeaseStore;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.manager.config.ShardConfig;
import dev.sluice.manager.queue.DbClock;
import dev.sluice.manager.queue.QueueManager;
import dev.sluice.manager.queue.Subscription;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything one manager runs for one shard: the connection pool, the database clock, discovery of
 * queue tables (always, so receivers can subscribe to a standby), the {@link LeaseKeeper}, and —
 * only while this process holds the shard's lease — a {@link QueueManager} per valid queue table.
 *
 * <p>Each discovery round also reads the operators' switches ({@link QueueControl}: {@code sluice
 * queue pause|resume}) and applies them to the queues it serves.
 *
 * <p>Threads: {@code sluice-<shard>-maintenance} runs discovery and the purgers; {@code
 * sluice-<shard>-lease} the lease keeper. Leadership changes and discovery take this object's lock;
 * the queue map is concurrent so that gRPC threads can look queues up without it.
 */
public final class ShardManager implements LeaseKeeper.Leadership {
  private static final Logger log = LoggerFactory.getLogger(ShardManager.class);

  private final ShardConfig config;
  private final ManagerConfig manager;
  private final Clock clock;
  private final MeterRegistry registry;
  private final Subscriptions subscriptions;
  private final LeaseBalancer balancer;
  private final Map<String, QueueManager> queues = new ConcurrentHashMap<>();

  /** Valid queue tables found by the last discovery, served or not. */
  private final Map<String, QueueTable> discovered = new ConcurrentHashMap<>();

  /** Queue tables found but not served, with the reason. */
  private final Map<String, String> disabled = new ConcurrentHashMap<>();

  /** Stores for acks that arrive when this process no longer dispatches the queue. */
  private final Map<String, EventStore> directStores = new ConcurrentHashMap<>();

  private final Counter configErrors;
  private HikariDataSource dataSource;
  private DbClock dbClock;
  private QueueCatalog catalog;
  private QueueControl control;

  /** The last pause switches read; kept when a read fails, so a blip never resumes a queue. */
  private Map<String, Boolean> paused = Map.of();

  private ScheduledExecutorService maintenance;
  private LeaseKeeper keeper;
  private Thread keeperThread;
  private boolean migrated;
  private volatile boolean leading;
  private volatile long leadingSinceNs;
  private volatile boolean stopped;

  ShardManager(
      ShardConfig config,
      ManagerConfig manager,
      Clock clock,
      MeterRegistry registry,
      Subscriptions subscriptions,
      LeaseBalancer balancer) {
    this.config = config;
    this.manager = manager;
    this.clock = clock;
    this.registry = registry;
    this.subscriptions = subscriptions;
    this.balancer = balancer;
    this.configErrors = registry.counter("sluice.queue.config.errors", "shard", config.name());
    registry.gauge("sluice.queues.disabled", Tags.of("shard", config.name()), disabled, Map::size);
  }

  public String name() {
    return config.name();
  }

  public ShardConfig config() {
    return config;
  }

  /** Whether this process holds the shard's lease and dispatches its queues. */
  public boolean leading() {
    return leading;
  }

  public synchronized void start() {
    dataSource =
        DataSources.pool(
            "sluice-" + config.name(),
            config.jdbcUrl(),
            config.user(),
            config.password(),
            config.poolSize(),
            new MicrometerMetricsTrackerFactory(registry));
    dbClock = new DbClock(clock);
    catalog = new QueueCatalog(dataSource);
    control = new QueueControl(dataSource);
    maintenance =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sluice-" + config.name() + "-maintenance");
              t.setDaemon(true);
              return t;
            });
    discover();
    long every = manager.discoveryInterval().toMillis();
    maintenance.scheduleWithFixedDelay(this::discover, every, every, TimeUnit.MILLISECONDS);
    keeper =
        new LeaseKeeper(
            config.name(),
            manager.managerId(),
            new JdbcLeaseStore(dataSource),
            balancer,
            this,
            manager.leaseTtl().toNanos(),
            manager.leaseRenew().toNanos());
    keeperThread = new Thread(keeper, "sluice-" + config.name() + "-lease");
    keeperThread.setDaemon(true);
    keeperThread.start();
    log.info(
        "shard {}: started ({} queue tables found); seeking its lease",
        config.name(),
        discovered.size());
  }

  // ---------------------------------------------------------------- leadership

  @Override
  public synchronized void lead(long token) {
    if (stopped) {
      return;
    }
    leading = true;
    leadingSinceNs = System.nanoTime();
    for (QueueTable t : discovered.values()) {
      if (!queues.containsKey(t.name())) {
        startQueue(t);
      }
    }
  }

  @Override
  public synchronized void stopLeading(String why) {
    leading = false;
    for (String name : Set.copyOf(queues.keySet())) {
      QueueManager q = queues.remove(name);
      if (q != null) {
        q.abandon("shard " + config.name() + ": " + why);
      }
    }
  }

  // ---------------------------------------------------------------- discovery

  /**
   * Finds queue tables and reconciles: starts new queues (when leading), restarts changed ones,
   * stops vanished or broken ones. A problem with one table never stops the others.
   */
  public synchronized void discover() {
    if (stopped) {
      return;
    }
    try {
      if (!migrated) {
        SluiceMigrations.migrateSluice(dataSource);
        migrated = true;
      }
      readPauseSwitches();
      Set<String> seen = new HashSet<>();
      for (QueueCatalog.Discovered d : catalog.discover()) {
        seen.add(d.table());
        if (d.valid()) {
          if (disabled.remove(d.table()) != null) {
            log.info("shard {}: queue {} is valid again", config.name(), d.table());
          }
          QueueTable before = discovered.put(d.table(), d.queue());
          if (!d.queue().equals(before)) {
            directStores.remove(d.table());
          }
          if (!leading) {
            continue;
          }
          QueueManager running = queues.get(d.table());
          if (running != null && running.table().equals(d.queue())) {
            running.setPaused(paused.getOrDefault(d.table(), false));
            continue;
          }
          if (running != null) {
            log.info(
                "shard {}: queue {} changed; restarting it with {}",
                config.name(),
                d.table(),
                d.queue().options().asMap());
            queues.remove(d.table());
            running.stop(manager.shutdownTimeout());
          }
          startQueue(d.queue());
        } else {
          discovered.remove(d.table());
          String before = disabled.put(d.table(), d.problem());
          if (!d.problem().equals(before)) {
            configErrors.increment();
            log.error(
                "shard {}: {} — this queue is not served; the others are",
                config.name(),
                d.problem());
          }
          QueueManager running = queues.remove(d.table());
          if (running != null) {
            running.stop(manager.shutdownTimeout());
          }
        }
      }
      for (String name : Set.copyOf(discovered.keySet())) {
        if (!seen.contains(name)) {
          discovered.remove(name);
          QueueManager running = queues.remove(name);
          if (running != null) {
            log.info(
                "shard {}: queue table {} is gone (or no longer marked); stopping it",
                config.name(),
                name);
            running.stop(manager.shutdownTimeout());
          }
        }
      }
      disabled.keySet().retainAll(seen);
    } catch (RuntimeException e) {
      log.warn("shard {}: discovery failed, will retry: {}", config.name(), e.toString());
    }
  }

  private void readPauseSwitches() {
    try {
      paused = control.paused();
    } catch (RuntimeException e) {
      log.warn(
          "shard {}: cannot read {}, keeping the last pause switches: {}",
          config.name(),
          QueueControl.TABLE,
          e.toString());
    }
  }

  private void startQueue(QueueTable table) {
    QueueManager qm =
        new QueueManager(
            config.name(),
            table,
            new JdbcEventStore(dataSource, table),
            dbClock,
            registry,
            maintenance,
            manager.forgetDelay(),
            manager.tenantLimitsFor(table.name()));
    qm.setPaused(paused.getOrDefault(table.name(), false));
    queues.put(table.name(), qm);
    if (table.options().fair() && !table.hasTenantIndex()) {
      log.warn(
          "shard {}: queue {} has no (state, tenant, time_next) index: under a deep backlog one"
              + " tenant can hide others' events from the poller. Fix: ALTER TABLE `{}` ADD INDEX"
              + " `{}` (`state`, `tenant`, `time_next`)",
          config.name(),
          table.name(),
          table.name(),
          QueueConvention.TENANT_INDEX);
    }
    qm.start();
    for (Subscription s : subscriptions.forQueue(table.name())) {
      if (s.keyRange().overlaps(config.keyRange())) {
        qm.attach(s);
      }
    }
  }

  /** Whether this manager holds the shard's lease (read by {@code sluice_shard_lease_held}). */
  public boolean leaseHeld() {
    return leading;
  }

  // ---------------------------------------------------------------- lookups

  public QueueManager queue(String name) {
    return queues.get(name);
  }

  public Map<String, QueueManager> queues() {
    return Map.copyOf(queues);
  }

  /** Whether a valid queue table of that name exists on this shard (served here or not). */
  public boolean knows(String queue) {
    return discovered.containsKey(queue);
  }

  public Set<String> discoveredNames() {
    return Set.copyOf(discovered.keySet());
  }

  public Map<String, String> disabled() {
    return Map.copyOf(disabled);
  }

  public HikariDataSource dataSource() {
    return dataSource;
  }

  /**
   * A store for a queue this process does not dispatch right now: acks and nacks for events it (or
   * another manager) fired still apply through the CAS. Null when the table is unknown.
   */
  public EventStore directStore(String queue) {
    QueueTable t = discovered.get(queue);
    if (t == null) {
      return null;
    }
    return directStores.computeIfAbsent(queue, q -> new JdbcEventStore(dataSource, t));
  }

  public QueueTable table(String queue) {
    return discovered.get(queue);
  }

  public DbClock clock() {
    return dbClock;
  }

  // ---------------------------------------------------------------- stop

  /**
   * Stops in order: the lease keeper, then every queue (each bounded: receivers finish, held events
   * are released), then gives the lease up so another manager takes over at once, then the pool.
   */
  public void stop() {
    synchronized (this) {
      if (stopped) {
        return;
      }
      stopped = true;
    }
    if (keeper != null) {
      keeper.stop();
      try {
        keeperThread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (maintenance != null) {
      maintenance.shutdown();
    }
    queues.values().parallelStream().forEach(q -> q.stop(manager.shutdownTimeout()));
    queues.clear();
    leading = false;
    if (keeper != null) {
      keeper.resign();
    }
    if (maintenance != null) {
      try {
        if (!maintenance.awaitTermination(5, TimeUnit.SECONDS)) {
          log.warn("shard {}: maintenance thread did not stop in 5 s", config.name());
          maintenance.shutdownNow();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (dataSource != null) {
      dataSource.close();
    }
    log.info("shard {}: stopped", config.name());
  }

  /** For tests and status: how long this process has led the shard, or zero. */
  public Duration leadingFor() {
    return leading ? Duration.ofNanos(System.nanoTime() - leadingSinceNs) : Duration.ZERO;
  }
}
