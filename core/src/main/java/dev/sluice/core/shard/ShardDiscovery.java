package dev.sluice.core.shard;

import dev.sluice.core.EngineConfig;
import dev.sluice.core.QueueListener;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.loop.LoopRunner;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueControl;
import dev.sluice.db.QueueTable;
import dev.sluice.db.ShardSecrets;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.store.EventStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Discovery of a shard's queue tables, always (so receivers can subscribe to a standby), on the
 * {@code sluice-<shard>-maintenance} thread: the migrations, the delivery key, the operators' pause
 * switches ({@link QueueControl}: {@code sluice queue pause|resume}) and the catalog, then the
 * reconcile with the {@link ServedQueues}.
 *
 * <p>Locks: {@link #discovering} (one round at a time; held across the round's database calls and
 * the stops of the queues it retires; nothing else takes it), then the shard's lock (the {@link
 * ServedQueues} monitor) for the apply step only, in memory. The maps are concurrent: the tables
 * are read by any thread, written under the shard's lock.
 */
final class ShardDiscovery {
  private static final Logger log = LoggerFactory.getLogger(ShardDiscovery.class);

  /** A disabled table's problem is logged again at most this often while it lasts. */
  static final long PROBLEM_LOG_EVERY_NS = TimeUnit.MINUTES.toNanos(1);

  private final ShardConfig config;
  private final EngineConfig manager;
  private final List<QueueListener> listeners;
  private final ShardPool pool;
  private final ServedQueues served;
  private final Counter configErrors;

  /** A failed discovery round, counted and logged (under {@link #discovering}). */
  private final LoopRunner runner;

  /** Valid queue tables found by the last discovery, served or not. */
  private final Map<String, QueueTable> discovered = new ConcurrentHashMap<>();

  /** Queue tables found but not served, with the reason. */
  private final Map<String, String> disabled = new ConcurrentHashMap<>();

  /** When each disabled table's problem was last logged (monotonic ns); discovery thread only. */
  private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

  /** Stores for acks that arrive when this process no longer dispatches the queue. */
  private final Map<String, EventStore> directStores = new ConcurrentHashMap<>();

  /** Serializes discovery rounds; the first lock in the order (see the class comment). */
  private final Object discovering = new Object();

  private boolean migrated;

  /** The shard's delivery-token key, read once from sluice_secret; never logged. */
  private volatile byte[] deliveryKey;

  ShardDiscovery(
      ShardConfig config,
      EngineConfig manager,
      MeterRegistry registry,
      List<QueueListener> listeners,
      ShardPool pool,
      ServedQueues served) {
    this.config = config;
    this.manager = manager;
    this.listeners = listeners;
    this.pool = pool;
    this.served = served;
    this.runner = new LoopRunner(pool.faults(), "discovery");
    this.configErrors = registry.counter("sluice.queue.config.errors", "shard", config.name());
    registry.gauge("sluice.queues.disabled", Tags.of("shard", config.name()), disabled, Map::size);
  }

  byte[] deliveryKey() {
    return deliveryKey;
  }

  Collection<QueueTable> tables() {
    return discovered.values();
  }

  QueueTable table(String name) {
    return discovered.get(name);
  }

  Set<String> names() {
    return Set.copyOf(discovered.keySet());
  }

  Map<String, String> disabled() {
    return Map.copyOf(disabled);
  }

  /**
   * A store for a queue this process does not dispatch right now: acks and nacks for events it (or
   * another manager) fired still apply through the CAS. Null when the table is unknown. Unfenced on
   * purpose: these are not a leader's writes but receivers' answers, each a CAS on the epoch the
   * receiver was given, right whichever manager applies it.
   */
  EventStore directStore(String queue) {
    QueueTable t = discovered.get(queue);
    if (t == null) {
      return null;
    }
    return directStores.computeIfAbsent(queue, q -> pool.unfenced(t));
  }

  /**
   * Finds queue tables and reconciles: starts new queues (when leading), applies changes to running
   * ones in place (restarting only for a change that cannot be applied so, saying why), stops
   * vanished or broken ones. A problem with one table — whatever it throws — never stops the
   * others: that table is disabled with the reason, the rest are reconciled.
   *
   * <p>Three steps: the database reads, with no lock but {@link #discovering}; the apply, under the
   * shard's lock, in memory only (queues started or updated in place, the ones to retire taken out
   * of the map); then, outside that lock, the retired queues stopped (each drains for a bounded
   * time) and the restarted ones started again if the shard is still led.
   */
  void discover() {
    synchronized (discovering) {
      if (served.stopped()) {
        return;
      }
      try {
        if (!migrated) {
          SluiceMigrations.migrateSluice(pool.dataSource());
          migrated = true;
        }
        if (deliveryKey == null) {
          deliveryKey = ShardSecrets.deliveryKey(pool.dataSource());
        }
        Map<String, Boolean> switches = readPauseSwitches();
        List<QueueCatalog.Discovered> found = pool.catalog().discover();
        Retired retired = new Retired();
        synchronized (served) {
          if (served.stopped()) {
            return;
          }
          apply(found, switches, retired);
        }
        for (QueueManager q : retired.stop) {
          q.stop(manager.shutdownTimeout());
        }
        if (!retired.restart.isEmpty()) {
          synchronized (served) {
            for (String name : retired.restart) {
              QueueTable t = discovered.get(name);
              if (served.leading() && !served.stopped() && t != null && served.get(name) == null) {
                served.start(t);
              }
            }
          }
        }
      } catch (Throwable t) { // an Error would cancel the scheduled discovery for good
        runner.failed(t); // counted and logged; the schedule runs the next round
      }
    }
  }

  /** Queues a discovery's apply took out of service, to stop outside the shard's lock. */
  private static final class Retired {
    final List<QueueManager> stop = new ArrayList<>();

    /** Tables whose queue is stopped to be started again (a change it cannot follow in place). */
    final List<String> restart = new ArrayList<>();
  }

  /** The in-memory step of a discovery (under the lock): no database call, no queue stopped. */
  private void apply(
      List<QueueCatalog.Discovered> found, Map<String, Boolean> switches, Retired retired) {
    served.paused(switches);
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
        QueueManager running = served.remove(name);
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
    try {
      serve(d, retired);
    } finally {
      // After the queue is served (or not, when this process does not lead): a listing in between
      // finds it in one of the two (ShardManager#disabled leaves out the served ones).
      if (disabled.remove(d.table()) != null) {
        lastLogged.remove(d.table());
        log.info("shard {}: queue {} is valid again", config.name(), d.table());
      }
    }
  }

  /** A valid table: known, and served (started or updated in place) while this process leads. */
  private void serve(QueueCatalog.Discovered d, Retired retired) {
    QueueTable before = discovered.put(d.table(), d.queue());
    if (!d.queue().equals(before)) {
      directStores.remove(d.table());
    }
    if (!served.leading()) {
      return;
    }
    QueueManager running = served.get(d.table());
    if (running != null && !running.table().equals(d.queue())) {
      String why = running.update(d.queue(), served.leaderStore(d.queue()));
      if (why != null) {
        log.info(
            "shard {}: queue {} changed and is restarted (its events in flight are released)"
                + " because {}; new options {}",
            config.name(),
            d.table(),
            why,
            d.queue().options().asMap());
        served.remove(d.table());
        retired.stop.add(running);
        retired.restart.add(d.table());
        return;
      }
    }
    if (running != null) {
      running.setPaused(served.pausedNow(d.table()));
      return;
    }
    served.start(d.queue());
  }

  /**
   * Not serving a table: its reason is shown by the status page, the API and the metrics, and
   * logged when it changes and again at most every {@link #PROBLEM_LOG_EVERY_NS}.
   */
  private void disable(String table, String problem, Retired retired) {
    discovered.remove(table);
    String before = disabled.put(table, problem);
    long now = pool.ticker().nanos();
    Long last = lastLogged.get(table);
    boolean changed = !problem.equals(before);
    if (changed) {
      configErrors.increment();
    }
    if (changed || last == null || now - last >= PROBLEM_LOG_EVERY_NS) {
      lastLogged.put(table, now);
      log.error("shard {}: {} — this queue is not served; the others are", config.name(), problem);
    }
    QueueManager running = served.remove(table);
    if (running != null) {
      retired.stop.add(running);
    }
  }

  /** The operators' pause switches, or the last ones read when they cannot be read now. */
  private Map<String, Boolean> readPauseSwitches() {
    try {
      return pool.control().paused();
    } catch (RuntimeException e) {
      log.warn(
          "shard {}: cannot read {}, keeping the last pause switches: {}",
          config.name(),
          QueueControl.TABLE,
          e.toString());
      return served.paused();
    }
  }
}
