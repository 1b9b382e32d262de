package dev.sluice.receiver;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential reconnect backoff with jitter: the n-th consecutive failure waits a random time in
 * [base/2, base] where base = min * 2^n capped at max, clamped to [min, max]. Jitter keeps a fleet
 * of receivers that lost the same manager from reconnecting in lockstep.
 */
final class Backoff {
  private final long minNanos;
  private final long maxNanos;
  private int failures; // guarded by this

  Backoff(Duration min, Duration max) {
    this.minNanos = min.toNanos();
    this.maxNanos = max.toNanos();
  }

  synchronized Duration nextDelay() {
    long base = minNanos;
    for (int i = 0; i < failures && base < maxNanos; i++) {
      base = base * 2;
    }
    base = Math.min(base, maxNanos);
    failures = Math.min(failures + 1, 62);
    long half = base / 2;
    long jittered = half + ThreadLocalRandom.current().nextLong(base - half + 1);
    return Duration.ofNanos(Math.max(minNanos, Math.min(maxNanos, jittered)));
  }

  /** The longest delay. */
  Duration max() {
    return Duration.ofNanos(maxNanos);
  }

  /** Called once a stream is subscribed again: the next failure starts from min. */
  synchronized void reset() {
    failures = 0;
  }
}
