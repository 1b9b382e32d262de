package dev.sluice.core.shard;

import dev.sluice.core.binlog.BinlogFollower;
import dev.sluice.core.binlog.BinlogState;
import dev.sluice.core.config.BinlogMode;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.groups.GroupCloser;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.schedule.ScheduleRunner;
import dev.sluice.db.QueueTable;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What lives for one leadership term of a shard beside its queues: the {@link ScheduleRunner}
 * (recurring events, {@code sluice-<shard>-schedules}), the {@link GroupCloser} (event groups,
 * {@code sluice-<shard>-groups}) and, when the shard's binlog is on, the {@link BinlogFollower}
 * ({@code sluice-<shard>-binlog}). One per shard, across terms; it starts a term's three workers
 * with that term's fence (the stores) and gate, and stops them, in one place. {@link ServedQueues}
 * holds it (a term's workers begin with the term, before its queues, and stop at the step-down and
 * the shard's stop); {@link ShardLeadership} holds it (a lost or refused lease halts the writers,
 * the lease keeper asks it for a dead thread, a graceful stop waits for it).
 *
 * <p>Order, for fencing: the previous term's workers are told to stop before the next term's start;
 * the group closer exists before the term's queues start (each is given it, and the binlog
 * follower's flag: {@link #equip}); at a step-down the term's gate is closed before the workers are
 * told to stop, so that nothing is written for the term from then on, whatever a worker is doing;
 * at a graceful stop the writers are waited for ({@link #STOP_WAIT}) before the lease is given up.
 *
 * <p>Threads: {@link #begin}, {@link #equip} and {@link #stop} run under the shard's lock (the
 * {@link ServedQueues} monitor): they start threads and tell them to stop, and never wait or call
 * the database. {@link #halt} and {@link #fault} run on any thread with no lock and no database
 * call; {@link #awaitStopped} on the stopping thread with no lock held. The current term's workers
 * are one volatile record, replaced whole at {@link #begin}. Each worker owns its own thread.
 */
final class TermWorkers {
  /** How long a graceful stop waits for the term's writers, both together. */
  static final Duration STOP_WAIT = Duration.ofSeconds(2);

  /** One term's workers; {@code binlog} is null when the shard's binlog is off. */
  private record Term(ScheduleRunner schedules, GroupCloser groups, BinlogFollower binlog) {}

  private final ShardConfig config;
  private final ShardPool pool;
  private final MeterRegistry registry;
  private final Predicate<String> knownQueue;
  private final Function<String, QueueManager> queue;
  private final Supplier<Collection<QueueManager>> queues;

  /** Whether the binlog is followed, across terms (what operators see). */
  private final BinlogState binlogState;

  /** The open-groups gauge's value, kept across terms (a gauge registers once). */
  private final AtomicLong groupsOpen = new AtomicLong();

  /** This term's workers (or the last term's, stopped); null before the first term. */
  private volatile Term current;

  /**
   * @param knownQueue whether a valid queue table of that name was discovered on the shard
   * @param queue the queue served here under that name, or null
   * @param queues the queues served here now
   */
  TermWorkers(
      ShardConfig config,
      ShardPool pool,
      MeterRegistry registry,
      Predicate<String> knownQueue,
      Function<String, QueueManager> queue,
      Supplier<Collection<QueueManager>> queues) {
    this.config = config;
    this.pool = pool;
    this.registry = registry;
    this.knownQueue = knownQueue;
    this.queue = queue;
    this.queues = queues;
    this.binlogState = new BinlogState(config.name(), config.binlog(), registry);
  }

  /** Whether the shard's binlog is followed now, and why not. */
  BinlogState binlog() {
    return binlogState;
  }

  /**
   * Under the shard's lock, as a term begins and before its queues start: the previous term's
   * workers are told to stop, and this term's start.
   */
  void begin(LeaderTerm term) {
    stop();
    Term t =
        new Term(
            new ScheduleRunner(
                config.name(),
                term.scheduleStore(pool.stores()),
                knownQueue,
                term.gate(),
                registry,
                pool.faults(),
                pool.ticker()),
            new GroupCloser(
                config.name(),
                term.groupStore(pool.stores()),
                term.gate(),
                pool.clock()::nowNs,
                this::servedTables,
                this::wake,
                registry,
                groupsOpen,
                pool.faults(),
                pool.ticker()),
            config.binlog() == BinlogMode.AUTO
                ? new BinlogFollower(
                    config,
                    pool.dataSource(),
                    pool.clock(),
                    queue,
                    queues,
                    pool.maintenance(),
                    binlogState,
                    pool.faults())
                : null);
    current = t;
    t.groups().start();
    if (t.binlog() != null) {
      t.binlog().start();
    }
    t.schedules().start();
  }

  /**
   * Under the shard's lock, while leading: a queue starting in this term is given the term's group
   * closer and whether its binlog is followed.
   */
  void equip(QueueManager q) {
    Term t = current;
    if (t != null) {
      q.groups(t.groups());
      if (t.binlog() != null) {
        q.rowNews().following(t.binlog()::following);
      }
    }
  }

  /**
   * Any thread, no lock, no database call, no wait: the term's writers (recurring events, event
   * groups) stop after their current pass. The term's gate is closed already, so they write nothing
   * more; the binlog follower, which writes nothing, stops with the step-down ({@link #stop}).
   */
  void halt() {
    Term t = current;
    if (t != null) {
      t.schedules().stop();
      t.groups().stop();
    }
  }

  /** No lock needed, no database call, no wait: every worker of the term is told to stop. */
  void stop() {
    Term t = current;
    if (t != null) {
      t.schedules().stop();
      t.groups().stop();
      if (t.binlog() != null) {
        t.binlog().stop();
      }
    }
  }

  /**
   * The shard's graceful stop, after {@link #stop} and with no lock held: waits for the writers'
   * threads, {@link #STOP_WAIT} at most in all, so that no write of theirs is under way when the
   * lease is given up.
   */
  void awaitStopped() {
    Term t = current;
    if (t != null) {
      long deadline = pool.ticker().nanos() + STOP_WAIT.toNanos();
      t.schedules().join(leftMs(deadline));
      t.groups().join(leftMs(deadline));
    }
  }

  /**
   * A writer's thread that died (not stopped): the shard cannot be served as it is, so the lease
   * keeper gives the lease up. Null when none. Asked only while the shard is led.
   */
  String fault() {
    Term t = current;
    if (t == null) {
      return null;
    }
    String schedules = t.schedules().fault();
    return schedules != null ? schedules : t.groups().fault();
  }

  private long leftMs(long deadline) {
    return Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - pool.ticker().nanos()));
  }

  /** The served queues' tables, by name (what the group closer purges). */
  private Map<String, QueueTable> servedTables() {
    Map<String, QueueTable> out = new LinkedHashMap<>();
    for (QueueManager q : queues.get()) {
      out.put(q.queue(), q.table());
    }
    return out;
  }

  /** Wakes the poller of the named queue, if this process serves it (a group was completed). */
  private void wake(String name) {
    QueueManager q = queue.apply(name);
    if (q != null) {
      q.pollSoon();
    }
  }
}
