package dev.sluice.core.shard;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.core.loop.Ticker;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueControl;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.Stores;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shard's pool and clock: the connection pool, the database clock, the catalog and control tables
 * read through it, and the {@code sluice-<shard>-maintenance} thread (discovery, purgers). Opened
 * by {@link ShardManager#start}, closed by its stop; read by any thread after that.
 */
final class ShardPool {
  private static final Logger log = LoggerFactory.getLogger(ShardPool.class);

  private final ShardConfig config;
  private final Clock clock;
  private final Ticker ticker;
  private final MeterRegistry registry;

  /** Counts and logs the errors of the shard's own loops (the lease keeper, discovery). */
  private final LoopFaults faults;

  private volatile HikariDataSource dataSource;

  /** The shard's stores over {@link #dataSource}: set with it. */
  private volatile Stores stores;

  private volatile DbClock dbClock;
  private volatile QueueCatalog catalog;
  private volatile QueueControl control;
  private volatile ScheduledExecutorService maintenance;

  ShardPool(ShardConfig config, Clock clock, Ticker ticker, MeterRegistry registry) {
    this.config = config;
    this.clock = clock;
    this.ticker = ticker;
    this.registry = registry;
    this.faults = LoopFaults.ofShard(registry, config.name(), ticker);
  }

  void open() {
    dataSource =
        DataSources.pool(
            "sluice-" + config.name(),
            config.jdbcUrl(),
            config.user(),
            config.password(),
            config.poolSize(),
            new MicrometerMetricsTrackerFactory(registry));
    dbClock = new DbClock(clock, ticker);
    stores = Stores.over(dataSource);
    catalog = new QueueCatalog(dataSource);
    control = new QueueControl(dataSource);
    ScheduledThreadPoolExecutor m =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "sluice-" + config.name() + "-maintenance");
              t.setDaemon(true);
              return t;
            });
    // A purger schedules its next turn itself (a one-shot delay): at shutdown such a turn is
    // dropped, as a periodic task would be, instead of holding the thread until it is due.
    m.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    m.setRemoveOnCancelPolicy(true);
    maintenance = m;
  }

  /** The shard's stores (the JDBC ones over its pool), once started. */
  Stores stores() {
    return stores;
  }

  HikariDataSource dataSource() {
    return dataSource;
  }

  /** Monotonic time for the shard's own pauses, deadlines and ages. */
  Ticker ticker() {
    return ticker;
  }

  LoopFaults faults() {
    return faults;
  }

  DbClock clock() {
    return dbClock;
  }

  QueueCatalog catalog() {
    return catalog;
  }

  QueueControl control() {
    return control;
  }

  ScheduledExecutorService maintenance() {
    return maintenance;
  }

  /** An unfenced store of {@code table}: receivers' answers, a deposed leader's last writes. */
  EventStore unfenced(QueueTable table) {
    return stores.events(table);
  }

  /**
   * A read that died half-way (out of memory in the middle of a result) may have left its
   * connection mid-stream: replace the pool's connections rather than reuse a broken one.
   */
  void evictConnections() {
    HikariDataSource ds = dataSource;
    if (ds != null && ds.getHikariPoolMXBean() != null) {
      ds.getHikariPoolMXBean().softEvictConnections();
    }
  }

  /** No new maintenance task from now on (the running one finishes). */
  void shutdownMaintenance() {
    if (maintenance != null) {
      maintenance.shutdown();
    }
  }

  /** Waits (5 s at most) for the maintenance thread, then closes the pool. */
  void close() {
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
  }
}
