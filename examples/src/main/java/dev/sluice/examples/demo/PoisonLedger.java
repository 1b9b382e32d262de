package dev.sluice.examples.demo;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every event the poison demo added to its queues, with how it must end: delivered and acked, dead
 * (with a reason), or skipped (a bad row, or a row of a table that must not be served). Loss is
 * judged against this and the tables at the end; earliness against the time each row was made due.
 *
 * <p>Thread-safe: the injector, the canary thread and the report use it.
 */
final class PoisonLedger {
  /** How an event must end. */
  enum Expect {
    DELIVERED,
    DEAD,
    SKIPPED
  }

  /**
   * @param expect how it must end
   * @param notBeforeNs the {@code time_next} the demo last gave the row (database clock), or 0
   */
  record Entry(Expect expect, long notBeforeNs) {}

  private final Map<String, Map<Long, Entry>> byQueue = new ConcurrentHashMap<>();

  void added(String queue, long id, Expect expect, long notBeforeNs) {
    byQueue
        .computeIfAbsent(queue, q -> new ConcurrentHashMap<>())
        .put(id, new Entry(expect, notBeforeNs));
  }

  /** Queue → (id → entry); a live view. */
  Map<String, Map<Long, Entry>> all() {
    return byQueue;
  }

  Map<Long, Entry> queue(String queue) {
    return byQueue.getOrDefault(queue, Map.of());
  }
}
