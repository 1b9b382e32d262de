package dev.sluice.core.queue.context;

import dev.sluice.core.fairness.TenantLimits;
import dev.sluice.core.groups.Groups;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.DispatchStore;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.MaintenanceStore;
import dev.sluice.db.store.OperatorStore;
import dev.sluice.db.store.OrderingStore;

/**
 * What every part of one queue's manager shares: who it is, its store, clock and policy (the
 * comment's options, with per-tenant limits that config may override).
 *
 * <p>The table, its store and the backoff change in place when a migration alters the table in a
 * way the running queue can follow ({@code QueueManager.update}): they are volatile and replaced
 * together by {@link #update}, so each reader sees the old or the new table, and any thread may
 * read them. Everything else is fixed for the queue manager's life. Without a {@link LoopFaults}
 * given, loop errors are counted and logged only.
 */
public final class QueueContext {
  private final String shard;
  private final DbClock clock;
  private final QueueMetrics metrics;
  private final TenantLimits tenantLimits;
  private final LoopFaults faults;
  private volatile Live live;

  /** The shard's event groups: set once by the queue manager's owner before it starts. */
  private volatile Groups groups = Groups.NONE;

  /** The parts that change together when the table is altered in place. */
  private record Live(QueueTable table, EventStore store, RetryPolicy retry) {}

  public QueueContext(
      String shard,
      QueueTable table,
      EventStore store,
      DbClock clock,
      QueueMetrics metrics,
      TenantLimits tenantLimits) {
    this(
        shard,
        table,
        store,
        clock,
        metrics,
        tenantLimits,
        new LoopFaults(metrics.registry(), shard, table.name(), clock.ticker()));
  }

  public QueueContext(
      String shard,
      QueueTable table,
      EventStore store,
      DbClock clock,
      QueueMetrics metrics,
      TenantLimits tenantLimits,
      LoopFaults faults) {
    this.shard = shard;
    this.clock = clock;
    this.metrics = metrics;
    this.tenantLimits = tenantLimits;
    this.faults = faults;
    this.live = new Live(table, store, RetryPolicy.of(table.options()));
  }

  /** The altered table, its store and its backoff replace the old ones for every later read. */
  public void update(QueueTable table, EventStore store) {
    QueueOptions o = table.options();
    this.live = new Live(table, store, RetryPolicy.of(o));
  }

  public Groups groups() {
    return groups;
  }

  public void groups(Groups g) {
    this.groups = g == null ? Groups.NONE : g;
  }

  public String shard() {
    return shard;
  }

  public QueueTable table() {
    return live.table();
  }

  /** The poller's, firers', ack batcher's and retry collector's port to the table. */
  public DispatchStore dispatch() {
    return live.store();
  }

  /** Key holds and turns (an ordered queue, a group's completion event). */
  public OrderingStore ordering() {
    return live.store();
  }

  /** Operators' commands on the table (cancel). */
  public OperatorStore operator() {
    return live.store();
  }

  /** The purger's deletes and the counts. */
  public MaintenanceStore maintenance() {
    return live.store();
  }

  public DbClock clock() {
    return clock;
  }

  public RetryPolicy retry() {
    return live.retry();
  }

  public QueueMetrics metrics() {
    return metrics;
  }

  public TenantLimits tenantLimits() {
    return tenantLimits;
  }

  /** Counts and reports the errors of this queue's loops and the death of its workers. */
  public LoopFaults faults() {
    return faults;
  }

  public String queue() {
    return table().name();
  }

  public QueueOptions options() {
    return table().options();
  }

  /** "queue X on shard Y", for messages. */
  public String where() {
    return "queue " + queue() + " on shard " + shard;
  }
}
