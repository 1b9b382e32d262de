package dev.sluice.examples.demo;

import dev.sluice.proto.v1.CancelStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * With {@code sluice demo --groups}: what the producer committed, as it knows it from its own
 * inserts (ids returned by {@code EventProducer.insertUnique}), for the checker to hold against
 * what the handlers saw and what the tables hold at the end.
 *
 * <p>Thread-safe: the writers and the sealer record concurrently.
 */
final class GroupLedger {
  /** One committed event of a queue of the demo's one shard. */
  record Row(String queue, long id) {}

  /** A group: its key, its completion (once committed) and its children's count as planned. */
  static final class Group {
    final String key;
    final String completionQueue;
    final int size;
    final boolean sealedLater;
    volatile long completionId = -1;

    Group(String key, String completionQueue, int size, boolean sealedLater) {
      this.key = key;
      this.completionQueue = completionQueue;
      this.size = size;
      this.sealedLater = sealedLater;
    }
  }

  private final Map<String, Group> groups = new ConcurrentHashMap<>();
  private final Map<Row, String> children = new ConcurrentHashMap<>();
  private final Set<Row> doomed = ConcurrentHashMap.newKeySet();
  private final Set<Row> cancelled = ConcurrentHashMap.newKeySet();
  private final Set<Row> copiesInserted = ConcurrentHashMap.newKeySet();
  private final AtomicLong childrenCommitted = new AtomicLong();
  private final AtomicLong duplicatesInserted = new AtomicLong();
  private final AtomicLong duplicatesWrongId = new AtomicLong();
  private final AtomicLong retries = new AtomicLong();
  private final AtomicLong retryDuplicates = new AtomicLong();
  private final AtomicLong cancelsRefused = new AtomicLong();
  private final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();

  /** A group's children committed (with its completion, unless it is sealed later). */
  void committed(Group g, Map<Row, Boolean> childRows) {
    groups.put(g.key, g);
    childRows.forEach(
        (row, isDoomed) -> {
          children.put(row, g.key);
          if (isDoomed) {
            doomed.add(row);
          }
        });
    childrenCommitted.addAndGet(childRows.size());
  }

  /** The group's completion committed: it is sealed. */
  void sealed(Group g, long completionId) {
    g.completionId = completionId;
  }

  /**
   * A deliberate repeat of a dedup key already used: {@code outcomeId} and {@code duplicate} as
   * {@code insertUnique} returned them, {@code expectedId} the event that holds the key.
   */
  void repeated(String queue, long expectedId, long outcomeId, boolean duplicate) {
    if (!duplicate) {
      copiesInserted.add(new Row(queue, outcomeId));
      note("a repeat of the dedup key of " + queue + " #" + expectedId + " inserted #" + outcomeId);
      return;
    }
    duplicatesInserted.incrementAndGet();
    if (outcomeId != expectedId) {
      duplicatesWrongId.incrementAndGet();
      note(
          "a repeat of the dedup key of "
              + queue
              + " #"
              + expectedId
              + " was called a duplicate of #"
              + outcomeId);
    }
  }

  /** A transaction failed and is tried again (its events carry dedup keys: none goes in twice). */
  void retried() {
    retries.incrementAndGet();
  }

  /** An insert of a retried transaction found its key taken: the failed attempt had committed. */
  void retryDuplicate() {
    retryDuplicates.incrementAndGet();
  }

  /**
   * The managers' answer to a cancel: cancelled, or else not pending (fired, settled, or cancelled
   * already: by this very cancel, when a killed manager cut the call after applying it and the
   * retry went to the other) or no answer (every manager failed the call).
   */
  void cancelAnswered(Row row, CancelStatus status) {
    if (status == CancelStatus.CANCEL_STATUS_CANCELLED) {
      cancelled.add(row);
      return;
    }
    cancelsRefused.incrementAndGet();
  }

  void note(String problem) {
    if (problems.size() < 20) {
      problems.add(problem);
    }
  }

  Map<String, Group> groups() {
    return groups;
  }

  /** Every committed child, with its group's key. */
  Map<Row, String> children() {
    return children;
  }

  boolean doomed(Row row) {
    return doomed.contains(row);
  }

  /** Children the managers said they cancelled. */
  Set<Row> cancelled() {
    return cancelled;
  }

  /** Repeats that were inserted (not found duplicate): each is a duplicate that got in. */
  Set<Row> copiesInserted() {
    return copiesInserted;
  }

  long childrenCommitted() {
    return childrenCommitted.get();
  }

  long groupCount() {
    return groups.size();
  }

  long sealedCount() {
    return groups.values().stream().filter(g -> g.completionId >= 0).count();
  }

  long duplicatesInserted() {
    return duplicatesInserted.get();
  }

  long duplicatesWrongId() {
    return duplicatesWrongId.get();
  }

  long retries() {
    return retries.get();
  }

  long retryDuplicates() {
    return retryDuplicates.get();
  }

  long cancelsRefused() {
    return cancelsRefused.get();
  }

  List<String> problems() {
    return new ArrayList<>(problems);
  }
}
