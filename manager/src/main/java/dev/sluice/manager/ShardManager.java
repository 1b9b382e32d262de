package dev.sluice.manager;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueControl;
import dev.sluice.db.QueueTable;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.manager.config.ShardConfig;
import dev.sluice.manager.queue.DbClock;
import dev.sluice.manager.queue.QueueManager;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
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
 * Everything one manager runs for one shard: the connection pool, the database clock, and a {@link
 * QueueManager} per valid queue table, found by periodic discovery (so a new queue needs a
 * migration, never a restart).
 *
 * <p>Each discovery round also reads the operators' switches ({@link QueueControl}: {@code sluice
 * queue pause|resume}) and applies them to the queues it serves.
 *
 * <p>Threads: {@code sluice-<shard>-maintenance} runs discovery and the purgers. The queue map is
 * concurrent so that gRPC threads can look queues up.
 */
public final class ShardManager {
  private static final Logger log = LoggerFactory.getLogger(ShardManager.class);

  private final ShardConfig config;
  private final Clock clock;
  private final MeterRegistry registry;
  private final Duration discoveryInterval;
  private final Duration shutdownTimeout;
  private final Map<String, QueueManager> queues = new ConcurrentHashMap<>();

  /** Queue tables found but not served, with the reason. */
  private final Map<String, String> disabled = new ConcurrentHashMap<>();

  private final Counter configErrors;
  private HikariDataSource dataSource;
  private DbClock dbClock;
  private QueueCatalog catalog;
  private QueueControl control;

  /** The last pause switches read; kept when a read fails, so a blip never resumes a queue. */
  private Map<String, Boolean> paused = Map.of();

  private ScheduledExecutorService maintenance;
  private boolean migrated;
  private volatile boolean stopped;

  public ShardManager(
      ShardConfig config,
      Clock clock,
      MeterRegistry registry,
      Duration discoveryInterval,
      Duration shutdownTimeout) {
    this.config = config;
    this.clock = clock;
    this.registry = registry;
    this.discoveryInterval = discoveryInterval;
    this.shutdownTimeout = shutdownTimeout;
    this.configErrors = registry.counter("sluice_queue_config_errors", "shard", config.name());
    registry.gauge(
        "sluice_queues_disabled",
        io.micrometer.core.instrument.Tags.of("shard", config.name()),
        disabled,
        Map::size);
  }

  public String name() {
    return config.name();
  }

  public synchronized void start() {
    dataSource =
        DataSources.pool(
            "sluice-" + config.name(),
            config.jdbcUrl(),
            config.user(),
            config.password(),
            config.poolSize());
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
    long every = discoveryInterval.toMillis();
    maintenance.scheduleWithFixedDelay(this::discover, every, every, TimeUnit.MILLISECONDS);
    log.info("shard {}: started ({} queues served)", config.name(), queues.size());
  }

  /**
   * Finds queue tables and reconciles: starts new queues, restarts changed ones, stops vanished or
   * broken ones. A problem with one table never stops the others.
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
            running.stop(shutdownTimeout);
          }
          startQueue(d.queue());
        } else {
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
            running.stop(shutdownTimeout);
          }
        }
      }
      for (String name : Set.copyOf(queues.keySet())) {
        if (!seen.contains(name)) {
          log.info(
              "shard {}: queue table {} is gone (or no longer marked); stopping it",
              config.name(),
              name);
          queues.remove(name).stop(shutdownTimeout);
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
            maintenance);
    qm.setPaused(paused.getOrDefault(table.name(), false));
    queues.put(table.name(), qm);
    qm.start();
  }

  /**
   * Whether this manager holds the shard's lease. Hook for the lease keeper: until leases exist, a
   * started shard manager is the only one dispatching its shard, so this is true. The gauge {@code
   * sluice_shard_lease_held} reads it.
   */
  public boolean leaseHeld() {
    return !stopped;
  }

  public QueueManager queue(String name) {
    return queues.get(name);
  }

  public Map<String, QueueManager> queues() {
    return Map.copyOf(queues);
  }

  public Map<String, String> disabled() {
    return Map.copyOf(disabled);
  }

  public HikariDataSource dataSource() {
    return dataSource;
  }

  /** Stops every queue (each bounded), then the pool. */
  public synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    if (maintenance != null) {
      maintenance.shutdown();
    }
    queues.values().parallelStream().forEach(q -> q.stop(shutdownTimeout));
    queues.clear();
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
}
