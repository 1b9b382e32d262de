package dev.sluice.manager.queue;

import dev.sluice.db.QueueOptions;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.EventStore;

/** What every part of one queue's manager shares: who it is, its store, clock and policy. */
record QueueContext(
    String shard,
    QueueTable table,
    EventStore store,
    DbClock clock,
    Backoff backoff,
    QueueMetrics metrics) {

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
