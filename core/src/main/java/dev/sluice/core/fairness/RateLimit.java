package dev.sluice.core.fairness;

/**
 * The queue's {@code max_qps}: at most that many events fired a second, in bursts of at most a
 * tenth of a second's worth (at least one). A generic cell rate algorithm: one number, the time at
 * which the next event would be on schedule; an event may go if that time is less than a burst
 * ahead of now.
 *
 * <p>Owned by the {@code Dispatcher} thread: no locks. Times are monotonic nanoseconds.
 */
public final class RateLimit {
  private final int perSecond;
  private final long intervalNs;
  private final int burst;

  /** When the next event is on schedule. */
  private long nextOnScheduleNs = Long.MIN_VALUE / 2;

  /**
   * @param perSecond events a second; 0 for no limit
   */
  public RateLimit(int perSecond) {
    this(perSecond, Math.max(1, perSecond / 10));
  }

  /**
   * @param perSecond events a second; 0 for no limit
   * @param burst events that may go at once after a quiet spell (at least 1)
   */
  public RateLimit(int perSecond, int burst) {
    this.perSecond = Math.max(0, perSecond);
    this.intervalNs = perSecond <= 0 ? 0 : Math.max(1, 1_000_000_000L / perSecond);
    this.burst = Math.max(1, burst);
  }

  /** Whether its whole burst is available at {@code nowNs}: as good as a new one. */
  public boolean rested(long nowNs) {
    return nextOnScheduleNs <= nowNs;
  }

  /** The events a second this allows (0: no limit). */
  public int perSecond() {
    return perSecond;
  }

  public boolean limited() {
    return intervalNs > 0;
  }

  /** How many events may go now. */
  public int available(long nowNs) {
    if (intervalNs == 0) {
      return Integer.MAX_VALUE;
    }
    long ahead = Math.max(nextOnScheduleNs, nowNs) - nowNs;
    long room = (long) burst * intervalNs - ahead;
    return room <= 0 ? 0 : (int) Math.min(burst, room / intervalNs);
  }

  /** {@code n} events went at {@code nowNs}. */
  public void took(long nowNs, int n) {
    if (intervalNs > 0) {
      nextOnScheduleNs = Math.max(nextOnScheduleNs, nowNs) + n * intervalNs;
    }
  }

  /** How long until one more event may go (0 if one may now). */
  public long waitNs(long nowNs) {
    if (available(nowNs) > 0) {
      return 0;
    }
    long ahead = Math.max(nextOnScheduleNs, nowNs) - nowNs;
    return ahead - (long) (burst - 1) * intervalNs;
  }
}
