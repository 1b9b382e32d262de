package dev.sluice.core.shard;

import dev.sluice.core.loop.Ticker;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.store.EventStore;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;

/**
 * Stopping: the queues a shard stops, all at once rather than one after another, on the calling
 * thread and with no lock held (the shard's lock was let go once they were taken out of its map).
 */
final class QueueStops {
  /** How long a step-down waits for the threads of the queues it abandons, all together. */
  static final Duration ABANDON_WAIT = Duration.ofSeconds(2);

  private QueueStops() {}

  /**
   * Leadership lost: every queue stops dispatching at once. First each is handed an unfenced store
   * (the acks and releases it has yet to write are no longer a leader's, and its fenced store is
   * refused now: they go unfenced, as at a graceful stop, each a CAS on the epoch its receiver was
   * given, instead of being dropped) and told to stop; then their threads are waited for, for
   * {@link #ABANDON_WAIT} in all, so that N queues step down in about the time of one.
   */
  static void abandon(
      List<QueueManager> queues,
      Function<QueueManager, EventStore> unfenced,
      String why,
      Ticker ticker) {
    List<QueueManager> stopping =
        queues.stream()
            .filter(
                q -> {
                  q.handOver(unfenced.apply(q));
                  return q.abandon(why);
                })
            .toList();
    long deadline = ticker.nanos() + ABANDON_WAIT.toNanos();
    for (QueueManager q : stopping) {
      q.awaitAbandoned(deadline);
    }
  }

  /** A graceful stop of every queue, in parallel; each is bounded by {@code timeout}. */
  static void stop(Collection<QueueManager> queues, Duration timeout) {
    queues.parallelStream().forEach(q -> q.stop(timeout));
  }
}
