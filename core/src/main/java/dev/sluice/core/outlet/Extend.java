package dev.sluice.core.outlet;

import dev.sluice.db.store.EventRef;

/**
 * A receiver's wish to hold the fired event {@code ref} longer: its deadline moved to {@code byNs}
 * from now, bounded by the attempt's fire ({@code firedAtNs}, as the receiver was given it) plus
 * the queue's max_hold. See {@code QueueEngine.extend}.
 */
public record Extend(EventRef ref, long byNs, long firedAtNs) {

  public enum Status {
    /** The deadline is {@link Answer#deadlineNs()}. */
    OK,
    /** The event is no longer fired at this epoch: nothing changed. */
    STALE,
    /** No such event: nothing changed. */
    UNKNOWN,
    /** Held for max_hold already: the deadline stays at fire + max_hold. */
    LIMIT
  }

  /** The answer to one extension. */
  public record Answer(EventRef ref, Status status, long deadlineNs) {}
}
