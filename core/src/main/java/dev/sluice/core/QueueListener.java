package dev.sluice.core;

import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.QueueTable;

/**
 * What the server around the core learns of each queue's life on a shard, to add outlets of its own
 * (a channel bound to the queue) and to refuse a table whose binding is wrong. Called on the
 * shard's maintenance thread; must not block for long.
 */
public interface QueueListener {

  /** Why {@code table} cannot be served on {@code shard} by this server, or null when it can. */
  default String problem(String shard, QueueTable table) {
    return null;
  }

  /** {@code queue} started dispatching on its shard; outlets may be attached to it now. */
  default void started(QueueManager queue) {}
}
