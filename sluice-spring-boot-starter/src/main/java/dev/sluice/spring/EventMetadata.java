package dev.sluice.spring;

import dev.sluice.receiver.ReceivedEvent;
import java.time.Instant;

/**
 * What Sluice knows about one delivery, besides the event's data.
 *
 * @param attempt the delivery attempt (the epoch): 1 the first time, higher on retries
 * @param dueTime when the event became due (database clock)
 * @param firedTime when the manager fired this attempt (database clock)
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
    Instant firedTime) {

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
        instant(e.firedTimeNanos()));
  }

  private static Instant instant(long nanos) {
    return Instant.ofEpochSecond(
        Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
  }
}
