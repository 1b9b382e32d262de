package dev.sluice.core.loop;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Retry delays: exponential in the attempt number from {@code min} to {@code max}, with jitter.
 * Attempt 1 waits about {@code min}, each further attempt doubles it, and no delay ever leaves
 * [min, max] — bounded so that a retry is never pushed out for days.
 */
public final class Backoff {
  /**
   * The one backoff of core's own retries: a worker loop's next pass after an error ({@link
   * LoopRunner}), a write of acks the database refused, a direct ack applied with no queue manager.
   * 50 ms after the first failure, doubling to 5 s, with jitter (so a shard's many queues do not
   * retry a restarted database in step).
   */
  public static final Backoff DB_RETRY = new Backoff(Duration.ofMillis(50), Duration.ofSeconds(5));

  private final long minNs;
  private final long maxNs;

  public Backoff(Duration min, Duration max) {
    this.minNs = min.toNanos();
    this.maxNs = Math.max(max.toNanos(), minNs);
  }

  /** The delay before retrying after failed attempt number {@code attempt} (1 = first). */
  public long delayNs(long attempt) {
    long base = minNs;
    for (long i = 1; i < attempt && base < maxNs; i++) {
      base = base > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : base * 2;
    }
    base = Math.min(base, maxNs);
    // "Equal jitter": half fixed, half random, so retries of a burst spread out.
    long half = base / 2;
    long d = half + (half > 0 ? ThreadLocalRandom.current().nextLong(half + 1) : 0);
    return Math.max(minNs, Math.min(maxNs, d));
  }

  /**
   * The longest wait a receiver's {@code retry_after} may ask for when the queue's max_backoff is
   * shorter: a day. Longer (or overflowing) requests are cut to it, never wrapped around to "now".
   */
  public static final long MAX_RETRY_AFTER_NS = TimeUnit.DAYS.toNanos(1);

  /**
   * A nack's retry-after as a delay: 0 for none (or a negative one), else that long, at most {@link
   * #MAX_RETRY_AFTER_NS} or max_backoff, whichever is longer.
   */
  public long retryAfterNs(long retryAfterNs) {
    if (retryAfterNs <= 0) {
      return 0;
    }
    return Math.min(retryAfterNs, Math.max(maxNs, MAX_RETRY_AFTER_NS));
  }

  /** Milliseconds as nanoseconds, held at the largest long instead of wrapping. */
  public static long msToNs(long ms) {
    return ms >= Long.MAX_VALUE / 1_000_000 ? Long.MAX_VALUE : ms * 1_000_000;
  }

  /** {@code nowNs + delayNs}, stopping at the largest long instead of wrapping around. */
  public static long at(long nowNs, long delayNs) {
    long t = nowNs + delayNs;
    return ((nowNs ^ t) & (delayNs ^ t)) < 0 ? (delayNs < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : t;
  }

  public long minNs() {
    return minNs;
  }

  public long maxNs() {
    return maxNs;
  }
}
