package dev.sluice.manager.security;

/**
 * Per-principal limits, so that one client cannot starve the others; 0 means no limit.
 *
 * @param streams live Subscribe streams at once
 * @param subscribesPerSecond Subscribe attempts per second (a burst of as many is allowed)
 * @param credits credits (max_in_flight) summed over the principal's live streams; a Subscribe or
 *     Flow asking more is granted what is left, and the Subscribed answer says how much
 */
public record Limits(int streams, double subscribesPerSecond, int credits) {
  public static final Limits NONE = new Limits(0, 0, 0);

  public Limits {
    if (streams < 0) {
      throw new IllegalArgumentException("limits.streams must not be negative, was " + streams);
    }
    if (subscribesPerSecond < 0) {
      throw new IllegalArgumentException(
          "limits.subscribes_per_second must not be negative, was " + subscribesPerSecond);
    }
    if (credits < 0) {
      throw new IllegalArgumentException("limits.credits must not be negative, was " + credits);
    }
  }
}
