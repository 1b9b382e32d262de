package dev.sluice.manager.admin;

import static dev.sluice.manager.admin.Grants.checkQueue;
import static dev.sluice.manager.admin.Grants.invalid;

import dev.sluice.core.EngineException;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.store.EventStore;
import java.util.List;

/** Finds a queue's shard and store among this manager's shards, for the operator calls. */
final class ShardLocator {
  /** A queue's shard and store. */
  record Located(ShardManager shard, EventStore store) {}

  private final QueueEngine engine;

  ShardLocator(QueueEngine engine) {
    this.engine = engine;
  }

  /** The shard named (the only one when empty) and the queue's store on it. */
  Located locate(String queue, String shard) {
    checkQueue(queue);
    ShardManager s;
    if (shard == null || shard.isEmpty()) {
      List<ShardManager> all = engine.shards();
      if (all.size() != 1) {
        throw invalid(
            "shard is required: this manager has several shards ("
                + String.join(", ", all.stream().map(ShardManager::name).toList())
                + "); event ids are unique per shard only");
      }
      s = all.get(0);
    } else {
      s =
          engine
              .shard(shard)
              .orElseThrow(
                  () ->
                      new EngineException(
                          EngineException.Kind.NOT_FOUND,
                          "shard: no shard named '" + shard + "' here"));
    }
    EventStore store = s.directStore(queue);
    if (store == null) {
      String problem = s.disabled().get(queue);
      if (problem != null) {
        throw new EngineException(EngineException.Kind.FAILED_PRECONDITION, problem);
      }
      throw new EngineException(
          EngineException.Kind.NOT_FOUND, "queue: no queue '" + queue + "' on shard " + s.name());
    }
    return new Located(s, store);
  }

  /** The shard's database clock now (ns): its measured clock, else one query. */
  static long now(Located at) {
    return at.shard().clock() != null && at.shard().clock().synced()
        ? at.shard().clock().nowNs()
        : at.store().serverTimeNs();
  }
}
