package dev.sluice.spring;

import dev.sluice.receiver.ReceivedEvent;
import java.time.Instant;

/**
 * What Sluice knows about one delivery, besides the event's data.
 *
 * @param attempt the delivery attempt (the epoch): 1 the first time, higher on retries
 * @param dueTime when the event became due (database clock)
 * @param firedTime when the manager fired this attempt (database clock)
 * @param orderingKey for an ordered queue, the event's ordering key as text ({@code ""} when the
 *     whole queue is one key); null when the queue is not ordered or the key is NULL: see {@link
 *     ReceivedEvent#orderingKey()}
 */
public record EventMetadata(
    long id,
    long attempt,
    String queue,
    String shard,
    String tenant,
    int priority,
    Instant dueTime,
    Instant createdTime,
    Instant firedTime,
    String orderingKey) {

  /** The metadata of an unordered queue's event (no ordering key). */
  public EventMetadata(
      long id,
      long attempt,
      String queue,
      String shard,
      String tenant,
      int priority,
      Instant dueTime,
      Instant createdTime,
      Instant firedTime) {
    this(id, attempt, queue, shard, tenant, priority, dueTime, createdTime, firedTime, null);
  }

  static EventMetadata of(ReceivedEvent e) {
    return new EventMetadata(
        e.id(),
        e.attempt(),
        e.queue(),
        e.shard(),
        e.tenant(),
        e.priority(),
        instant(e.dueTimeNanos()),
        instant(e.createdTimeNanos()),
        instant(e.firedTimeNanos()),
        e.orderingKey());
  }

  private static Instant instant(long nanos) {
    return Instant.ofEpochSecond(
        Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
  }
}
