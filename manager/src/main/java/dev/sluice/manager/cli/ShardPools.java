package dev.sluice.manager.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueCatalog.Discovered;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.MaintenanceStore;
import dev.sluice.db.store.OperatorStore;
import dev.sluice.db.store.Stores;
import dev.sluice.manager.config.ManagerConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * Small connection pools to every shard of a config, for one CLI command; and finding a queue on
 * them. Closing closes the pools.
 */
final class ShardPools implements AutoCloseable {
  /** One shard's pool. */
  record Shard(String name, HikariDataSource dataSource, ShardConfig config) {
    QueueCatalog catalog() {
      return new QueueCatalog(dataSource);
    }
  }

  /** A queue table found on a shard, valid or not. */
  record Found(Shard shard, Discovered queue) {
    /** The queue's operator port; a table that breaks the convention is refused (exit 1). */
    OperatorStore operator() {
      return store();
    }

    /** The queue's counts (and purge) port; a table that breaks the convention is refused. */
    MaintenanceStore maintenance() {
      return store();
    }

    private EventStore store() {
      if (!queue.valid()) {
        throw CliException.failed(
            "shard "
                + shard.name()
                + ": "
                + queue.problem()
                + " (run sluice check for the statements that fix it)");
      }
      return Stores.over(shard.dataSource()).events(queue.queue());
    }
  }

  private final List<Shard> shards = new ArrayList<>();

  ShardPools(ManagerConfig config) {
    for (ShardConfig s : config.shards()) {
      shards.add(
          new Shard(
              s.name(),
              DataSources.pool("sluice-cli-" + s.name(), s.jdbcUrl(), s.user(), s.password(), 2),
              s));
    }
  }

  List<Shard> all() {
    return List.copyOf(shards);
  }

  /** The shards to act on: all of them, or the one named (unknown name: exit 2). */
  List<Shard> select(String shardName) {
    if (shardName == null) {
      return all();
    }
    for (Shard s : shards) {
      if (s.name().equals(shardName)) {
        return List.of(s);
      }
    }
    throw CliException.badInput(
        "no shard named '"
            + shardName
            + "' in the config (shards: "
            + String.join(", ", shards.stream().map(Shard::name).toList())
            + ")");
  }

  /** Every shard (of those selected) holding a queue table of that name; none: exit 2. */
  List<Found> find(String queue, String shardName) {
    List<Found> out = new ArrayList<>();
    for (Shard s : select(shardName)) {
      QueueCatalog catalog = s.catalog();
      for (QueueCatalog.Candidate c : catalog.candidates()) {
        if (c.table().equals(queue)) {
          out.add(new Found(s, catalog.inspect(c)));
        }
      }
    }
    if (out.isEmpty()) {
      throw CliException.badInput(
          "no queue table named '"
              + queue
              + "' on "
              + (shardName == null ? "any shard" : "shard " + shardName)
              + " (sluice queue list shows the queues)");
    }
    return out;
  }

  /** The one shard holding the queue; on several, {@code --shard} must say which (exit 2). */
  Found findOne(String queue, String shardName) {
    List<Found> found = find(queue, shardName);
    if (found.size() > 1) {
      throw CliException.badInput(
          "queue "
              + queue
              + " is on shards "
              + String.join(", ", found.stream().map(f -> f.shard().name()).toList())
              + ": event ids are per shard, so name one with --shard");
    }
    return found.get(0);
  }

  @Override
  public void close() {
    for (Shard s : shards) {
      s.dataSource().close();
    }
  }
}
