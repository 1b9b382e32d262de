package dev.sluice.manager;

import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.manager.config.ShardConfig;
import dev.sluice.manager.queue.QueueManager;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The registry of shard managers in this process: starts and stops them and finds the manager of a
 * queue for the gRPC layer.
 */
public final class QueueEngine {
  private final List<ShardManager> shards = new ArrayList<>();

  public QueueEngine(ManagerConfig config, Clock clock, MeterRegistry registry) {
    for (ShardConfig s : config.shards()) {
      shards.add(
          new ShardManager(
              s, clock, registry, config.discoveryInterval(), config.shutdownTimeout()));
    }
  }

  public void start() {
    for (ShardManager s : shards) {
      s.start();
    }
  }

  /** Stops every shard in parallel; each stop is bounded. */
  public void stop() {
    shards.parallelStream().forEach(ShardManager::stop);
  }

  public List<ShardManager> shards() {
    return List.copyOf(shards);
  }

  /** The manager of a queue on the first shard that serves it. */
  public Optional<QueueManager> find(String queue) {
    for (ShardManager s : shards) {
      QueueManager q = s.queue(queue);
      if (q != null) {
        return Optional.of(q);
      }
    }
    return Optional.empty();
  }

  /** Why a queue is not served, if some shard found it malformed. */
  public Optional<String> problem(String queue) {
    for (ShardManager s : shards) {
      String p = s.disabled().get(queue);
      if (p != null) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /** Every served queue on every shard. */
  public List<QueueManager> served() {
    List<QueueManager> out = new ArrayList<>();
    for (ShardManager s : shards) {
      out.addAll(s.queues().values());
    }
    out.sort(
        java.util.Comparator.comparing(QueueManager::queue).thenComparing(QueueManager::shard));
    return out;
  }

  /** Sorted names of every served queue. */
  public List<String> servedNames() {
    return served().stream().map(QueueManager::queue).distinct().toList();
  }
}
