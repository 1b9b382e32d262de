package dev.sluice.manager.queue;

import dev.sluice.db.QueueOptions;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.EventStore;

/**
 * What every part of one queue's manager shares: who it is, its store, clock and policy (the
 * comment's options, with per-tenant limits that config may override).
 */
record QueueContext(
    String shard,
    QueueTable table,
    EventStore store,
    DbClock clock,
    Backoff backoff,
    QueueMetrics metrics,
    TenantLimits tenantLimits,
    LoopFaults faults) {

  /** Without a fault listener: loop errors are counted and logged only. */
  QueueContext(
      String shard,
      QueueTable table,
      EventStore store,
      DbClock clock,
      Backoff backoff,
      QueueMetrics metrics,
      TenantLimits tenantLimits) {
    this(
        shard,
        table,
        store,
        clock,
        backoff,
        metrics,
        tenantLimits,
        new LoopFaults(metrics.registry(), shard, table.name()));
  }

  String queue() {
    return table.name();
  }

  QueueOptions options() {
    return table.options();
  }

  /** "queue X on shard Y", for messages. */
  String where() {
    return "queue " + table.name() + " on shard " + shard;
  }
}
