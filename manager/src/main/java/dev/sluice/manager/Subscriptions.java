package dev.sluice.manager;

import dev.sluice.manager.grpc.Subscription;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every live Subscribe stream of this process, so that a queue manager started later (this process
 * took a shard's lease, or a queue was created) attaches the receivers already waiting.
 */
final class Subscriptions {
  private final Map<Long, Subscription> byStream = new ConcurrentHashMap<>();

  void add(Subscription s) {
    byStream.put(s.streamId(), s);
  }

  void remove(Subscription s) {
    byStream.remove(s.streamId());
  }

  List<Subscription> forQueue(String queue) {
    return byStream.values().stream().filter(s -> s.queue().equals(queue)).toList();
  }

  List<Subscription> all() {
    return List.copyOf(byStream.values());
  }
}
