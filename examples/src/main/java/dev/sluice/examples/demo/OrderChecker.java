package dev.sluice.examples.demo;

import dev.sluice.db.QueueConvention;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * With {@code sluice demo --ordered}: checks, from what the handlers saw and nothing Sluice
 * reports, that the events of a key were handled one at a time and in order. Each event carries its
 * key ({@code ordering_key}) and its number within the key ({@code key_seq}, growing with its id,
 * as {@link OrderedProducer} writes them).
 *
 * <p>An event is <em>in flight</em> from the moment a handler starts on it until that handler
 * returns or throws (the receiver then acks or nacks; the manager cannot let the next event of the
 * key go before that answer arrives, so this is a lower bound of the manager's in flight). A
 * delivery is a violation when
 *
 * <ul>
 *   <li>another event of its key is in flight (a second delivery of the same event, say after a
 *       manager was killed, is not: it counts as a duplicate, as in the plain demo);
 *   <li>a later event of its key was already handled (its handler returned, so it was acked); or
 *   <li>a later event of its key was already delivered (the key's events go in id order: once a
 *       later one went, an earlier one must be finished for good).
 * </ul>
 *
 * A delivery breaking several rules counts once.
 *
 * <p>Thread-safe: handler threads of every receiver call {@link #started} and {@link #finished};
 * each key's record is guarded by its own monitor.
 */
final class OrderChecker {
  static final String KEY_COLUMN = QueueConvention.ORDERING_KEY;
  static final String SEQ_COLUMN = "key_seq";
  private static final int EXAMPLES = 10;

  /** An event of a key some handlers are running. */
  private static final class Running {
    final EventKey event;
    int handlers;

    Running(EventKey event) {
      this.event = event;
    }
  }

  /** What the handlers did with one key; guarded by its own monitor. */
  private static final class KeyRecord {
    final Map<Long, Running> running = new HashMap<>();
    long maxHandledSeq;
    long maxDeliveredSeq;
    long lastFinishedNs;
    int maxInFlight;
    long deliveries;
  }

  private final Map<String, KeyRecord> keys = new ConcurrentHashMap<>();
  private final AtomicLong violations = new AtomicLong();
  private final AtomicLong concurrentRedeliveries = new AtomicLong();
  private final AtomicInteger maxInFlight = new AtomicInteger();
  private final ConcurrentLinkedQueue<String> examples = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Long> turnNs = new ConcurrentLinkedQueue<>();

  /**
   * A handler starts on the event number {@code seq} of {@code key}.
   *
   * @param dueNs when the event was due (database clock; same machine as {@link #wallNs})
   */
  void started(String key, long seq, EventKey event, String receiverId, long dueNs) {
    long now = wallNs();
    KeyRecord r = keys.computeIfAbsent(key, k -> new KeyRecord());
    String problem = null;
    int inFlight;
    synchronized (r) {
      r.deliveries++;
      for (Map.Entry<Long, Running> e : r.running.entrySet()) {
        if (e.getKey() != seq) {
          problem = "while #" + e.getKey() + " (" + e.getValue().event + ") was in flight";
          break;
        }
      }
      if (problem == null && seq < r.maxHandledSeq) {
        problem = "after #" + r.maxHandledSeq + " had been handled (acked)";
      }
      if (problem == null && seq < r.maxDeliveredSeq) {
        problem = "after #" + r.maxDeliveredSeq + " had been delivered (out of id order)";
      }
      Running run = r.running.computeIfAbsent(seq, s -> new Running(event));
      if (run.handlers++ > 0) {
        concurrentRedeliveries.incrementAndGet();
      }
      if (seq > r.maxDeliveredSeq && r.running.size() == 1 && dueNs < r.lastFinishedNs) {
        // The key's next event, already due when the one before it finished: its turn took this.
        turnNs.add(now - r.lastFinishedNs);
      }
      r.maxDeliveredSeq = Math.max(r.maxDeliveredSeq, seq);
      inFlight = r.running.size();
      r.maxInFlight = Math.max(r.maxInFlight, inFlight);
    }
    maxInFlight.accumulateAndGet(inFlight, Math::max);
    if (problem != null) {
      violations.incrementAndGet();
      if (examples.size() < EXAMPLES) {
        examples.add(
            "order violation: "
                + key
                + " #"
                + seq
                + " ("
                + event
                + ") went to "
                + receiverId
                + " "
                + problem);
      }
    }
  }

  /**
   * The handler of that delivery returned ({@code handled}: the receiver acks) or threw (it nacks).
   */
  void finished(String key, long seq, boolean handled) {
    KeyRecord r = keys.get(key);
    synchronized (r) {
      Running run = r.running.get(seq);
      if (run != null && --run.handlers == 0) {
        r.running.remove(seq);
      }
      if (handled) {
        r.maxHandledSeq = Math.max(r.maxHandledSeq, seq);
        r.lastFinishedNs = wallNs();
      }
    }
  }

  /** Keys at least one of whose events a handler saw. */
  long keys() {
    return keys.size();
  }

  long violations() {
    return violations.get();
  }

  /** The most events of one key in flight at once, over every key (1 when all went well). */
  int maxInFlightPerKey() {
    return maxInFlight.get();
  }

  /** Deliveries of an event while a handler still ran an earlier delivery of the same event. */
  long concurrentRedeliveries() {
    return concurrentRedeliveries.get();
  }

  /**
   * How long keys waited for their turn: from a handler returning (the receiver acks) to the start
   * of the handling of the key's next event, counted when that event was already due: {@code
   * "p50=..ms p99=..ms max=..ms (n=..)"}, or null when there was no such turn.
   */
  String turnLatencies() {
    long[] v = turnNs.stream().mapToLong(Long::longValue).sorted().toArray();
    if (v.length == 0) {
      return null;
    }
    return String.format(
        "p50=%dms p99=%dms max=%dms (n=%d)",
        v[v.length / 2] / 1_000_000,
        v[(int) Math.min(v.length - 1, Math.ceil(v.length * 0.99) - 1)] / 1_000_000,
        v[v.length - 1] / 1_000_000,
        v.length);
  }

  private static long wallNs() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** A few violations, described. */
  List<String> examples() {
    return new ArrayList<>(examples);
  }

  /** Where a key stands, for a report on an event of it left unfinished. */
  String describe(String key) {
    KeyRecord r = keys.get(key);
    if (r == null) {
      return key + ": no delivery seen";
    }
    synchronized (r) {
      return String.format(
          "%s: %d deliveries, last delivered #%d, last handled #%d, in flight now %s",
          key, r.deliveries, r.maxDeliveredSeq, r.maxHandledSeq, r.running.keySet());
    }
  }
}
