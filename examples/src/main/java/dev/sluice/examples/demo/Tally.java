package dev.sluice.examples.demo;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the receivers actually saw, independent of anything the manager reports: every handler
 * invocation, per event. The report's figures come from here and from the table, never from
 * Sluice's own counters, so the demo checks Sluice rather than trusting it.
 *
 * <p>Thread-safe: handler threads of several receivers write concurrently.
 */
final class Tally {
  private static final int EXAMPLES = 10;

  /** One event as seen by the receivers. */
  static final class Seen {
    final long orderId;
    final AtomicInteger deliveries = new AtomicInteger();
    final AtomicBoolean handled = new AtomicBoolean();

    Seen(long orderId) {
      this.orderId = orderId;
    }
  }

  private final Map<EventKey, Seen> events = new ConcurrentHashMap<>();
  private final AtomicLong deliveries = new AtomicLong();
  private final AtomicLong handled = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong early = new AtomicLong();
  private final ConcurrentLinkedQueue<String> earlyExamples = new ConcurrentLinkedQueue<>();

  /**
   * A handler was invoked for an event.
   *
   * @param dueNs when the event was due (database clock; same machine, so comparable)
   * @param seenNs the receiver's clock when the handler started
   */
  void delivered(EventKey event, long orderId, long dueNs, long seenNs, String receiverId) {
    events.computeIfAbsent(event, id -> new Seen(orderId)).deliveries.incrementAndGet();
    deliveries.incrementAndGet();
    if (seenNs < dueNs) {
      early.incrementAndGet();
      if (earlyExamples.size() < EXAMPLES) {
        earlyExamples.add(
            "event " + event + " seen by " + receiverId + " " + (dueNs - seenNs) + " ns early");
      }
    }
  }

  /** The handler returned normally, so the receiver acks. */
  void handled(EventKey event) {
    Seen s = events.get(event);
    if (s != null && s.handled.compareAndSet(false, true)) {
      handled.incrementAndGet();
    }
  }

  /** The handler threw on purpose, so the receiver nacks and the event is retried. */
  void failed() {
    failures.incrementAndGet();
  }

  /** Handler invocations, duplicates included. */
  long deliveries() {
    return deliveries.get();
  }

  /** Distinct events seen at least once. */
  long distinct() {
    return events.size();
  }

  /** Invocations beyond the first per event: retries after failures, crashes or timeouts. */
  long redeliveries() {
    return deliveries.get() - events.size();
  }

  /** Distinct events whose handler returned normally at least once. */
  long handledCount() {
    return handled.get();
  }

  long failures() {
    return failures.get();
  }

  long early() {
    return early.get();
  }

  Iterable<String> earlyExamples() {
    return earlyExamples;
  }

  /** What was seen of one event; null if it never was. */
  Seen get(EventKey event) {
    return events.get(event);
  }

  /** A copy of what was seen, by event; call it once the receivers are closed. */
  Map<EventKey, Seen> snapshot() {
    return new HashMap<>(events);
  }
}
