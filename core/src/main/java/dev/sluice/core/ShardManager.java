package dev.sluice.core;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.queue.DbClock;
import dev.sluice.core.queue.LoopFaults;
import dev.sluice.core.queue.LoopRunner;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.queue.ShardGate;
import dev.sluice.core.queue.Ticker;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueControl;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueTable;
import dev.sluice.db.ShardSecrets;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.Fence;
import dev.sluice.db.store.FencedOffException;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.db.store.JdbcLeaseStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
 * sluice-<shard>-lease} the lease keeper. The queue map is concurrent so that gRPC threads can look
 * queues up without a lock.
 *
 * <p>Locks, in the only order they are ever taken:
 *
 * <ol>
 *   <li>{@link #discovering}: one discovery round at a time. Held across the round's database calls
 *       (migrations, the pause switches, the catalog) and the stops of the queues it retires;
 *       nothing else takes it.
 *   <li>this object's monitor: the in-memory state of leadership and of the served queues ({@code
 *       leading}, the term's gate and fence, {@code queues}, {@code discovered}, {@code disabled},
 *       {@code paused}). Taken by {@link #lead}, {@link #stopLeading} and a discovery's apply step,
 *       which only starts queues and updates them in place from what the round read. No database
 *       call and no wait for a queue to drain is ever made while holding it, so a step-down never
 *       waits behind a discovery's database call.
 *   <li>a {@link QueueManager}'s monitor.
 * </ol>
 *
 * <p>A step-down first calls {@link #halt}, which takes no lock and makes no database call: it
 * closes the term's {@link ShardGate}, and from that moment no queue of the shard fires. Worker
 * faults ({@link #fault()}, the {@code LoopFaults} listener) and a write refused by the lease fence
 * ({@link #fencedOff}) take no lock either: they close the gate or tell the lease keeper, which
 * acts on its own thread.
 *
 * <p>Fencing: each term's queues write through stores conditioned on the term's lease token ({@link
 * Fence}); the first write refused (another manager took the lease) stops the shard at once.
 */
public final class ShardManager implements LeaseKeeper.Leadership {
  private static final Logger log = LoggerFactory.getLogger(ShardManager.class);

  private final ShardConfig config;
  private final EngineConfig manager;
  private final List<QueueListener> listeners;
  private final Clock clock;
  private final Ticker ticker;
  private final MeterRegistry registry;
  private final Subscriptions subscriptions;
  private final LeaseBalancer balancer;

  /** This process's nonce, told apart from another process started with the same manager id. */
  private final String instance;

  private final Map<String, QueueManager> queues = new ConcurrentHashMap<>();

  /** Valid queue tables found by the last discovery, served or not. */
  private final Map<String, QueueTable> discovered = new ConcurrentHashMap<>();

  /** Queue tables found but not served, with the reason. */
  private final Map<String, String> disabled = new ConcurrentHashMap<>();

  /** When each disabled table's problem was last logged (monotonic ns); discovery thread only. */
  private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

  /** A disabled table's problem is logged again at most this often while it lasts. */
  static final long PROBLEM_LOG_EVERY_NS = TimeUnit.MINUTES.toNanos(1);

  /** Stores for acks that arrive when this process no longer dispatches the queue. */
  private final Map<String, EventStore> directStores = new ConcurrentHashMap<>();

  private final Counter configErrors;
  private final Counter workerDeaths;

  /** The shard's primary refuses writes, as the lease keeper last read it. */
  private volatile boolean readOnly;

  /** Why the shard was given up for a fault, until it is served again; null when none. */
  private volatile String fault;

  /** Set while another live process uses this manager id; null otherwise. */
  private volatile String conflict;

  /** Told when {@link #fault()} changes (health). */
  private volatile Runnable healthChanged = () -> {};

  private HikariDataSource dataSource;
  private DbClock dbClock;
  private QueueCatalog catalog;
  private QueueControl control;

  /** The last pause switches read; kept when a read fails, so a blip never resumes a queue. */
  private Map<String, Boolean> paused = Map.of();

  private ScheduledExecutorService maintenance;
  private volatile LeaseKeeper keeper;

  /** This leadership term's gate: replaced (open) by {@link #lead}, closed by {@link #halt}. */
  private volatile ShardGate gate = new ShardGate();

  /** This leadership term's fence (its lease token); null before the first term. */
  private volatile Fence fence;

  /** Counts and logs the errors of the shard's own loops (the lease keeper, discovery). */
  private final LoopFaults shardFaults;

  /** A failed discovery round, counted and logged; under {@link #discovering}. */
  private final LoopRunner discoveryRunner;

  /** Serializes discovery rounds; the first lock in the order (see the class comment). */
  private final Object discovering = new Object();

  private Thread keeperThread;
  private boolean migrated;

  /** The shard's delivery-token key, read once from sluice_secret; never logged. */
  private volatile byte[] deliveryKey;

  private volatile boolean leading;
  private volatile long leadingSinceNs;
  private volatile boolean stopped;

  ShardManager(
      ShardConfig config,
      EngineConfig manager,
      Clock clock,
      Ticker ticker,
      MeterRegistry registry,
      Subscriptions subscriptions,
      List<QueueListener> listeners,
      LeaseBalancer balancer,
      String instance) {
    this.instance = instance;
    this.config = config;
    this.manager = manager;
    this.clock = clock;
    this.ticker = ticker;
    this.registry = registry;
    this.shardFaults = LoopFaults.ofShard(registry, config.name(), ticker);
    this.discoveryRunner = new LoopRunner(shardFaults, "discovery");
    this.subscriptions = subscriptions;
    this.listeners = listeners;
    this.balancer = balancer;
    this.configErrors = registry.counter("sluice.queue.config.errors", "shard", config.name());
    this.workerDeaths = registry.counter("sluice.worker.deaths", "shard", config.name());
    registry.gauge("sluice.queues.disabled", Tags.of("shard", config.name()), disabled, Map::size);
    registry.gauge(
        "sluice.manager.id.conflict",
        Tags.of("shard", config.name()),
        this,
        s -> s.conflict != null ? 1 : 0);
  }

  public String name() {
    return config.name();
  }

  public ShardConfig config() {
    return config;
  }

  /** The shard's delivery-token key, or null until the shard was first reached. */
  public byte[] deliveryKey() {
    return deliveryKey;
  }

  /** Whether this process holds the shard's lease and dispatches its queues. */
  public boolean leading() {
    return leading;
  }

  public void start() {
    synchronized (this) {
      init();
    }
    discover();
    long every = manager.discoveryInterval().toMillis();
    maintenance.scheduleWithFixedDelay(this::discover, every, every, TimeUnit.MILLISECONDS);
    log.info("shard {}: started ({} queue tables found)", config.name(), discovered.size());
  }

  private void init() {
    dataSource =
        DataSources.pool(
            "sluice-" + config.name(),
            config.jdbcUrl(),
            config.user(),
            config.password(),
            config.poolSize(),
            new MicrometerMetricsTrackerFactory(registry));
    dbClock = new DbClock(clock, ticker);
    catalog = new QueueCatalog(dataSource);
    control = new QueueControl(dataSource);
    maintenance =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sluice-" + config.name() + "-maintenance");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Starts seeking the shard's lease: only once receivers can reach this process (the gRPC server
   * listens), so that a shard taken over is not left with no receiver attached.
   */
  public synchronized void seekLease() {
    if (stopped || keeper != null) {
      return;
    }
    keeper =
        new LeaseKeeper(
            config.name(),
            manager.managerId(),
            instance,
            new JdbcLeaseStore(dataSource),
            balancer,
            this,
            manager.leaseTtl().toNanos(),
            manager.leaseRenew().toNanos(),
            ticker,
            shardFaults);
    keeperThread = new Thread(keeper, "sluice-" + config.name() + "-lease");
    keeperThread.setDaemon(true);
    keeperThread.setUncaughtExceptionHandler(
        (t, e) -> {
          // Nothing renews the lease any more: stop serving now rather than when it lapses.
          log.error("shard {}: lease keeper thread died: {}", config.name(), e.toString(), e);
          workerDeaths.increment();
          fault = "lease keeper died: " + e;
          healthChanged.run();
          halt(fault);
          stopLeading(fault);
        });
    keeperThread.start();
    log.info("shard {}: seeking its lease", config.name());
  }

  // ---------------------------------------------------------------- leadership

  @Override
  public synchronized void lead(long token) {
    if (stopped) {
      return;
    }
    gate = new ShardGate();
    fence = new Fence(config.name(), token, this::fencedOff);
    leading = true;
    leadingSinceNs = ticker.nanos();
    for (QueueTable t : discovered.values()) {
      if (!queues.containsKey(t.name())) {
        startQueue(t);
      }
    }
    if (fault != null) {
      log.info("shard {}: served again after: {}", config.name(), fault);
      fault = null;
      healthChanged.run();
    }
  }

  /**
   * The lease keeper found the lease held by another live manager: the shard is served, so a fault
   * that made this process give it up (a dead worker, a fenced-off write) no longer makes this
   * process unready; it is a standby like any other. No lock, no database call.
   */
  @Override
  public void servedElsewhere(String owner) {
    String f = fault;
    if (f != null && !leading) {
      log.info(
          "shard {}: served by {} now; this manager is ready again after: {}",
          config.name(),
          owner,
          f);
      fault = null;
      healthChanged.run();
    }
  }

  /** The lease keeper's check each round: a served queue whose worker thread is gone. */
  @Override
  public String fault() {
    for (QueueManager q : queues.values()) {
      if (!q.workersAlive()) {
        return "a worker thread of queue " + q.queue() + " is gone";
      }
    }
    return null;
  }

  /**
   * Why this shard is not served here for a fault: given up (a worker died) and not served again
   * yet, or refused because another live process uses this manager id. Null when none.
   */
  public String faultReason() {
    String f = fault;
    if (f != null) {
      return f;
    }
    return readOnly
        ? "the primary is read-only (demoted?): no manager can serve the shard"
        : conflict;
  }

  /** The lease keeper read the primary's read-only flag: shown in health while it is set. */
  @Override
  public void readOnly(boolean readOnly) {
    this.readOnly = readOnly;
    log.warn(
        "shard {}: the primary is {}",
        config.name(),
        readOnly ? "read-only: the shard is not served" : "writable again");
    healthChanged.run();
  }

  /** Another live process uses this manager id: refused to lead; shown in health. */
  @Override
  public void conflict(String why) {
    conflict = why;
    healthChanged.run();
  }

  /** Called (on any thread) when {@link #faultReason()} changes. */
  public void onHealthChange(Runnable r) {
    this.healthChanged = r;
  }

  /** A queue's worker fault: an Error survived, or a thread that died. Any thread, no lock. */
  private final dev.sluice.core.queue.LoopFaults.Listener faults =
      new dev.sluice.core.queue.LoopFaults.Listener() {
        @Override
        public void errorCaught(String queue, String loop, Throwable t) {
          // A read that died half-way (out of memory in the middle of a result) may have left its
          // connection mid-stream: replace the pool's connections rather than reuse a broken one.
          HikariDataSource ds = dataSource;
          if (ds != null && ds.getHikariPoolMXBean() != null) {
            ds.getHikariPoolMXBean().softEvictConnections();
          }
        }

        @Override
        public void workerDied(String queue, String thread, Throwable t) {
          workerDeaths.increment();
          String why = "worker " + thread + " of queue " + queue + " died: " + t;
          fault = why;
          healthChanged.run();
          LeaseKeeper k = keeper;
          if (k != null) {
            k.giveUp(why);
          }
        }
      };

  /**
   * A write of this term refused by the lease fence: another manager took the shard's lease. No
   * lock, no database call (any worker thread): no queue of the shard fires from now on, health
   * says why, and the lease keeper stops the queues on its own thread at once. A refusal reported
   * by a store of an earlier term is ignored.
   */
  void fencedOff(FencedOffException e) {
    Fence f = fence;
    if (stopped || !leading || f == null || f.token() != e.token()) {
      return;
    }
    gate.close();
    String why = e.getMessage();
    if (!why.equals(fault)) {
      log.error("{}", why);
      fault = why;
      healthChanged.run();
    }
    LeaseKeeper k = keeper;
    if (k != null) {
      k.fencedOff(why);
    }
  }

  /** The leader's store of a queue table: its writes are fenced by this term's lease token. */
  private EventStore leaderStore(QueueTable table) {
    return new JdbcEventStore(dataSource, table, fence);
  }

  /** No lock, no database call: every queue of the shard stops firing now. */
  @Override
  public void halt(String why) {
    gate.close();
  }

  @Override
  public synchronized void stopLeading(String why) {
    gate.close();
    leading = false;
    for (String name : Set.copyOf(queues.keySet())) {
      QueueManager q = queues.remove(name);
      if (q != null) {
        // The acks and releases the queue has yet to write are no longer a leader's, and its
        // fenced store is refused now: they go unfenced, as at a graceful stop (each is a CAS on
        // the epoch its receiver was given), instead of being dropped.
        q.handOver(new JdbcEventStore(dataSource, q.table()));
        q.abandon("shard " + config.name() + ": " + why);
      }
    }
  }

  // ---------------------------------------------------------------- discovery

  /**
   * Finds queue tables and reconciles: starts new queues (when leading), applies changes to running
   * ones in place (restarting only for a change that cannot be applied so, saying why), stops
   * vanished or broken ones. A problem with one table — whatever it throws — never stops the
   * others: that table is disabled with the reason, the rest are reconciled.
   *
   * <p>Three steps: the database reads, with no lock but {@link #discovering}; the apply, under
   * this object's monitor, in memory only (queues started or updated in place, the ones to retire
   * taken out of the map); then, outside the monitor, the retired queues stopped (each drains for a
   * bounded time) and the restarted ones started again if the shard is still led.
   */
  public void discover() {
    synchronized (discovering) {
      if (stopped) {
        return;
      }
      try {
        if (!migrated) {
          SluiceMigrations.migrateSluice(dataSource);
          migrated = true;
        }
        if (deliveryKey == null) {
          deliveryKey = ShardSecrets.deliveryKey(dataSource);
        }
        Map<String, Boolean> switches = readPauseSwitches();
        List<QueueCatalog.Discovered> found = catalog.discover();
        Retired retired = new Retired();
        synchronized (this) {
          if (stopped) {
            return;
          }
          apply(found, switches, retired);
        }
        for (QueueManager q : retired.stop) {
          q.stop(manager.shutdownTimeout());
        }
        if (!retired.restart.isEmpty()) {
          synchronized (this) {
            for (String name : retired.restart) {
              QueueTable t = discovered.get(name);
              if (leading && !stopped && t != null && !queues.containsKey(name)) {
                startQueue(t);
              }
            }
          }
        }
      } catch (Throwable t) { // an Error would cancel the scheduled discovery for good
        discoveryRunner.failed(t); // counted and logged; the schedule runs the next round
      }
    }
  }

  /** Queues a discovery's apply took out of service, to stop outside the monitor. */
  private static final class Retired {
    final List<QueueManager> stop = new ArrayList<>();

    /** Tables whose queue is stopped to be started again (a change it cannot follow in place). */
    final List<String> restart = new ArrayList<>();
  }

  /** The in-memory step of a discovery (under the monitor): no database call, no queue stopped. */
  private void apply(
      List<QueueCatalog.Discovered> found, Map<String, Boolean> switches, Retired retired) {
    paused = switches;
    Set<String> seen = new HashSet<>();
    for (QueueCatalog.Discovered d : found) {
      seen.add(d.table());
      try {
        reconcile(d, retired);
      } catch (Throwable e) { // NOPMD: one table's failure stays that table's
        if (e instanceof VirtualMachineError v && !(v instanceof StackOverflowError)) {
          throw v;
        }
        disable(d.table(), "queue " + d.table() + ": cannot be served: " + e, retired);
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
          retired.stop.add(running);
        }
      }
    }
    disabled.keySet().retainAll(seen);
    lastLogged.keySet().retainAll(seen);
  }

  /** One discovered table: serve it, follow its change, or disable it. */
  private void reconcile(QueueCatalog.Discovered d, Retired retired) {
    if (d.unreadable()) {
      // A database error, not the table's content: keep serving it as it was, look again later.
      log.warn("shard {}: {}; keeping it as it was", config.name(), d.problem());
      return;
    }
    if (!d.valid()) {
      disable(d.table(), d.problem(), retired);
      return;
    }
    for (QueueListener l : listeners) {
      String problem = l.problem(config.name(), d.queue());
      if (problem != null) {
        disable(d.table(), problem, retired);
        return;
      }
    }
    if (disabled.remove(d.table()) != null) {
      lastLogged.remove(d.table());
      log.info("shard {}: queue {} is valid again", config.name(), d.table());
    }
    QueueTable before = discovered.put(d.table(), d.queue());
    if (!d.queue().equals(before)) {
      directStores.remove(d.table());
    }
    if (!leading) {
      return;
    }
    QueueManager running = queues.get(d.table());
    if (running != null && !running.table().equals(d.queue())) {
      String why = running.update(d.queue(), leaderStore(d.queue()));
      if (why != null) {
        log.info(
            "shard {}: queue {} changed and is restarted (its events in flight are released)"
                + " because {}; new options {}",
            config.name(),
            d.table(),
            why,
            d.queue().options().asMap());
        queues.remove(d.table());
        retired.stop.add(running);
        retired.restart.add(d.table());
        return;
      }
    }
    if (running != null) {
      running.setPaused(paused.getOrDefault(d.table(), false));
      return;
    }
    startQueue(d.queue());
  }

  /**
   * Not serving a table: its reason is shown by the status page, the API and the metrics, and
   * logged when it changes and again at most every {@link #PROBLEM_LOG_EVERY_NS}.
   */
  private void disable(String table, String problem, Retired retired) {
    discovered.remove(table);
    String before = disabled.put(table, problem);
    long now = ticker.nanos();
    Long last = lastLogged.get(table);
    boolean changed = !problem.equals(before);
    if (changed) {
      configErrors.increment();
    }
    if (changed || last == null || now - last >= PROBLEM_LOG_EVERY_NS) {
      lastLogged.put(table, now);
      log.error("shard {}: {} — this queue is not served; the others are", config.name(), problem);
    }
    QueueManager running = queues.remove(table);
    if (running != null) {
      retired.stop.add(running);
    }
  }

  /** The operators' pause switches, or the last ones read when they cannot be read now. */
  private Map<String, Boolean> readPauseSwitches() {
    try {
      return control.paused();
    } catch (RuntimeException e) {
      log.warn(
          "shard {}: cannot read {}, keeping the last pause switches: {}",
          config.name(),
          QueueControl.TABLE,
          e.toString());
      synchronized (this) {
        return paused;
      }
    }
  }

  private void startQueue(QueueTable table) {
    QueueManager qm =
        new QueueManager(
            config.name(),
            table,
            leaderStore(table),
            dbClock,
            registry,
            maintenance,
            manager.forgetDelay(),
            manager.tenantLimitsFor(table.name()));
    qm.setPaused(paused.getOrDefault(table.name(), false));
    qm.onFault(faults);
    qm.gate(gate);
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
    for (Subscriptions.Subscription s : subscriptions.forQueue(table.name())) {
      if (s.keyRange().overlaps(config.keyRange())) {
        qm.attach(s.outlet());
      }
    }
    for (QueueListener l : listeners) {
      l.started(qm);
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
   * another manager) fired still apply through the CAS. Null when the table is unknown. Unfenced on
   * purpose: these are not a leader's writes but receivers' answers, each a CAS on the epoch the
   * receiver was given, right whichever manager applies it.
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
   * Stops in order: the lease keeper; no new fires (the gate) and the lease given up, so another
   * manager takes over at once; then every queue (each bounded: receivers finish, held events are
   * released); then the pool.
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
    // A planned hand-over: no new fires from here, and the lease is free before the queues drain,
    // so the next manager takes the shard at its next round instead of after the drain. What our
    // receivers still hold is acked here through the CAS (or released) meanwhile.
    gate.close();
    // What the queues still write (acks of what receivers hold, releases) is no longer a leader's:
    // unfenced, as a non-leader's acks are, so that the next leader's take does not refuse it.
    queues.values().forEach(q -> q.handOver(new JdbcEventStore(dataSource, q.table())));
    if (keeper != null) {
      keeper.resign();
    }
    if (maintenance != null) {
      maintenance.shutdown();
    }
    queues.values().parallelStream().forEach(q -> q.stop(manager.shutdownTimeout()));
    queues.clear();
    leading = false;
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
    return leading ? Duration.ofNanos(ticker.nanos() - leadingSinceNs) : Duration.ZERO;
  }
}
