package dev.sluice.core.shard;

import dev.sluice.core.EngineConfig;
import dev.sluice.core.QueueListener;
import dev.sluice.core.Subscriptions;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.EventStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue set of one shard: whether this process leads it, the current {@link LeaderTerm}, and —
 * only while it leads — a {@link QueueManager} per served queue table. A term's other workers are
 * the shard's {@link TermWorkers}: begun here with the term, before its queues, and stopped here at
 * the step-down and the shard's stop.
 *
 * <p>This object's monitor is the shard's lock (the second in the lock order of ARCHITECTURE.md):
 * it guards {@code leading}, the term, the queue map's changes, the pause switches and {@code
 * stopped}, and the discovery's apply step takes it too. Under it queues are started and updated in
 * place, and taken out of the map; never stopped or waited for, and no database call is made: the
 * queues taken out are stopped by the caller after it let go ({@link QueueStops}). Reads ({@link
 * #get}, {@link #all}, {@link #leading}, {@link #term}) take no lock: the map is concurrent and the
 * flags volatile, so gRPC threads look queues up freely.
 */
public final class ServedQueues {
  private static final Logger log = LoggerFactory.getLogger(ServedQueues.class);

  private final ShardConfig config;
  private final EngineConfig manager;
  private final MeterRegistry registry;
  private final Subscriptions subscriptions;
  private final List<QueueListener> listeners;
  private final ShardPool pool;

  /** Who hears of the queues' worker faults; set once, before the shard starts. */
  private LoopFaults.Listener faults;

  /** What lives for a term beside its queues; set once, before the shard starts. */
  private TermWorkers workers;

  private final Map<String, QueueManager> queues = new ConcurrentHashMap<>();

  /** The last pause switches read; kept when a read fails, so a blip never resumes a queue. */
  private Map<String, Boolean> paused = Map.of();

  /** This leadership term: replaced (open) by {@link #lead}, closed at the step-down. */
  private volatile LeaderTerm term = LeaderTerm.none();

  private volatile boolean leading;
  private volatile long leadingSinceNs;
  private volatile boolean stopped;

  ServedQueues(
      ShardConfig config,
      EngineConfig manager,
      MeterRegistry registry,
      Subscriptions subscriptions,
      List<QueueListener> listeners,
      ShardPool pool) {
    this.config = config;
    this.manager = manager;
    this.registry = registry;
    this.subscriptions = subscriptions;
    this.listeners = listeners;
    this.pool = pool;
  }

  /** Who hears of the queues' worker faults (the shard's leadership); before the shard starts. */
  void onFault(LoopFaults.Listener listener) {
    this.faults = listener;
  }

  /** The shard's term workers, begun and stopped with each term; before the shard starts. */
  void termWorkers(TermWorkers termWorkers) {
    this.workers = termWorkers;
  }

  boolean leading() {
    return leading;
  }

  boolean stopped() {
    return stopped;
  }

  LeaderTerm term() {
    return term;
  }

  QueueManager get(String name) {
    return queues.get(name);
  }

  Map<String, QueueManager> all() {
    return Map.copyOf(queues);
  }

  /**
   * A term begins: its workers first (each queue is given the group closer and the binlog's flag),
   * then every table given that is not served yet.
   */
  synchronized void lead(LeaderTerm next, Collection<QueueTable> tables) {
    term = next;
    leading = true;
    leadingSinceNs = pool.ticker().nanos();
    workers.begin(next);
    for (QueueTable t : tables) {
      if (!queues.containsKey(t.name())) {
        start(t);
      }
    }
  }

  /**
   * The step-down's step under the lock: the term's gate closed, not leading, and every queue taken
   * out of the map; the caller stops them after it let go.
   */
  synchronized List<QueueManager> stepDown() {
    term.close();
    workers.stop();
    leading = false;
    List<QueueManager> taken = new ArrayList<>();
    for (String name : Set.copyOf(queues.keySet())) {
      QueueManager q = queues.remove(name);
      if (q != null) {
        taken.add(q);
      }
    }
    return taken;
  }

  /** The shard stops for good: no term begins and no queue starts from now on. */
  synchronized boolean markStopped() {
    if (stopped) {
      return false;
    }
    stopped = true;
    workers.stop();
    return true;
  }

  /** After the shard's graceful stop stopped every queue (they stayed in the map meanwhile). */
  void clearAfterStop() {
    queues.clear();
    leading = false;
  }

  /** A served queue whose worker thread is gone, as a reason; null when none. */
  String workerFault() {
    for (QueueManager q : queues.values()) {
      if (!q.workersAlive()) {
        return "a worker thread of queue " + q.queue() + " is gone";
      }
    }
    return null;
  }

  // ---------------------------------------------------------------- under the lock (discovery)

  /** The pause switches of the round; under the lock. */
  void paused(Map<String, Boolean> switches) {
    paused = switches;
  }

  synchronized Map<String, Boolean> paused() {
    return paused;
  }

  boolean pausedNow(String table) {
    return paused.getOrDefault(table, false);
  }

  /** Takes a queue out of the map (to stop outside the lock); null when not served. */
  QueueManager remove(String table) {
    return queues.remove(table);
  }

  /** The leader's store of a queue table, fenced by this term's lease token. */
  EventStore leaderStore(QueueTable table) {
    return term.leaderStore(pool.stores(), table);
  }

  /** Starts serving a table; under the lock, while leading. */
  void start(QueueTable table) {
    QueueManager qm =
        new QueueManager(
            config.name(),
            table,
            leaderStore(table),
            pool.clock(),
            registry,
            pool.maintenance(),
            manager.forgetDelay(),
            manager.tenantLimitsFor(table.name()));
    qm.setPaused(paused.getOrDefault(table.name(), false));
    qm.onFault(faults);
    qm.gate(term.gate());
    workers.equip(qm);
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

  /** For tests and status: how long this process has led the shard, or zero. */
  Duration leadingFor() {
    return leading ? Duration.ofNanos(pool.ticker().nanos() - leadingSinceNs) : Duration.ZERO;
  }
}
