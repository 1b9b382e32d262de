package dev.sluice.examples.demo;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the poison queues' receivers saw: every handler invocation, per queue and event, with the
 * row's label, when it was seen and the due time the manager sent. Faults are judged from this and
 * from the tables, never from Sluice's own counters (but for the bad-row metric).
 *
 * <p>Thread-safe: handler threads of every poison receiver write concurrently.
 */
final class PoisonTally {
  /**
   * One handler invocation.
   *
   * @param label the row's {@code label} column as delivered
   * @param seenNs the receiver's clock (ns since the epoch) when the handler started
   * @param dueNs the due time the manager sent with the event
   */
  record Sighting(String label, long seenNs, long dueNs) {}

  private final Map<String, Map<Long, List<Sighting>>> byQueue = new ConcurrentHashMap<>();

  void seen(String queue, long id, String label, long seenNs, long dueNs) {
    byQueue
        .computeIfAbsent(queue, q -> new ConcurrentHashMap<>())
        .computeIfAbsent(id, i -> new CopyOnWriteArrayList<>())
        .add(new Sighting(label, seenNs, dueNs));
  }

  /** The sightings of one event, oldest first; empty if never delivered. */
  List<Sighting> of(String queue, long id) {
    List<Sighting> s = byQueue.getOrDefault(queue, Map.of()).get(id);
    return s == null ? List.of() : List.copyOf(s);
  }

  int deliveries(String queue, long id) {
    return of(queue, id).size();
  }

  /** Events of the queue delivered more than once. */
  long duplicated(String queue) {
    return byQueue.getOrDefault(queue, Map.of()).values().stream()
        .filter(l -> l.size() > 1)
        .count();
  }

  /** A live view of the queue's events and their sightings. */
  Map<Long, List<Sighting>> queue(String queue) {
    return byQueue.getOrDefault(queue, Map.of());
  }
}
