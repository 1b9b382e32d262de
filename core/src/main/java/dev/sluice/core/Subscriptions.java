package dev.sluice.core;

import dev.sluice.core.outlet.Outlet;
import dev.sluice.db.KeyRange;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every outlet subscribed to a queue in this process (a receiver's stream), so that a queue manager
 * started later (this process took a shard's lease, or a queue was created) attaches the outlets
 * already waiting. Any thread.
 */
public final class Subscriptions {
  /** An outlet's wish: events of {@code queue} from the shards whose key range overlaps. */
  public record Subscription(Outlet outlet, String queue, KeyRange keyRange) {}

  private final Map<Long, Subscription> byStream = new ConcurrentHashMap<>();

  void add(Subscription s) {
    byStream.put(s.outlet().streamId(), s);
  }

  Subscription remove(Outlet o) {
    return byStream.remove(o.streamId());
  }

  public List<Subscription> forQueue(String queue) {
    return byStream.values().stream().filter(s -> s.queue().equals(queue)).toList();
  }

  List<Subscription> all() {
    return List.copyOf(byStream.values());
  }
}
