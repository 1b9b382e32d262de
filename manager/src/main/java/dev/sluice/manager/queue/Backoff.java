package dev.sluice.manager.queue;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Retry delays: exponential in the attempt number from {@code min} to {@code max}, with jitter.
 * Attempt 1 waits about {@code min}, each further attempt doubles it, and no delay ever leaves
 * [min, max] — bounded so that a retry is never pushed out for days.
 */
public final class Backoff {
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

  public long minNs() {
    return minNs;
  }

  public long maxNs() {
    return maxNs;
  }
}
