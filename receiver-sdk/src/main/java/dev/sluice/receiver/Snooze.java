package dev.sluice.receiver;

import java.time.Duration;

/**
 * Thrown by an {@link EventHandler} to put its event back to pending for {@link #delay()} without
 * spending an attempt ("not yet": the handler waits on something outside). The manager counts the
 * snooze in the queue table's optional {@code snoozes} column (an event's attempts are then {@code
 * epoch - snoozes}); an event snoozed {@code max_snoozes} times, or one of a table without that
 * column, has the snooze count as a failed attempt, like {@link RetryLater}.
 *
 * <p>The snoozed delivery is over: a late ack of it changes nothing, and the event is delivered
 * again, as a new attempt number, after the delay.
 */
public class Snooze extends RetryLater {
  private static final long serialVersionUID = 1L;

  /**
   * @param delay how long the event waits, at least a millisecond
   * @param reason why, for logs and the dead reason should the snooze count as an attempt
   */
  public Snooze(Duration delay, String reason) {
    super(requirePositive(delay), reason);
  }

  private static Duration requirePositive(Duration delay) {
    if (delay == null || delay.isZero() || delay.isNegative()) {
      throw new IllegalArgumentException("a snooze's delay must be positive, was " + delay);
    }
    return delay;
  }
}
