package dev.sluice.db.store;

/**
 * A receiver's wish to hold a fired event longer: its deadline ({@code time_next}) moved to {@code
 * deadlineNs}, already bounded by the queue's max_hold, if the event is still fired at {@code
 * ref}'s epoch. A deadline is never moved earlier.
 */
public record Extension(EventRef ref, long deadlineNs) {

  /**
   * What became of an extension: {@link CasOutcome#APPLIED} with the deadline now in the row (the
   * asked one, or a later one already there), or STALE / UNKNOWN with 0.
   */
  public record Outcome(CasOutcome cas, long deadlineNs) {
    public static final Outcome STALE = new Outcome(CasOutcome.STALE, 0);
    public static final Outcome UNKNOWN = new Outcome(CasOutcome.UNKNOWN, 0);
  }
}
