/**
 * Exponential reconnect backoff with jitter, as the Java SDK's: the n-th consecutive failure waits
 * a random time in [base/2, base] where base = min * 2^n capped at max, clamped to [min, max].
 * Jitter keeps a fleet of receivers that lost the same manager from reconnecting in lockstep.
 * Each endpoint has its own; {@link reset} once its stream is subscribed again.
 */
export class Backoff {
  readonly minMs: number;
  readonly maxMs: number;
  private readonly random: () => number;
  private failures = 0;

  /** @param random a source of numbers in [0, 1) (tests pass a fixed one) */
  constructor(minMs = 100, maxMs = 5000, random: () => number = Math.random) {
    if (!(minMs > 0) || !Number.isFinite(minMs)) {
      throw new RangeError(`reconnect backoff min must be > 0 ms, was ${minMs}`);
    }
    if (!(maxMs >= minMs) || !Number.isFinite(maxMs)) {
      throw new RangeError(`reconnect backoff max must be >= min (${minMs} ms), was ${maxMs}`);
    }
    this.minMs = minMs;
    this.maxMs = maxMs;
    this.random = random;
  }

  /** The delay before the next attempt, in ms; each call counts one more failure. */
  nextDelayMs(): number {
    let base = this.minMs;
    for (let i = 0; i < this.failures && base < this.maxMs; i++) {
      base *= 2;
    }
    base = Math.min(base, this.maxMs);
    this.failures = Math.min(this.failures + 1, 62);
    const half = base / 2;
    const jittered = half + this.random() * (base - half);
    return Math.max(this.minMs, Math.min(this.maxMs, Math.round(jittered)));
  }

  /** A stream is subscribed again: the next failure starts from min. */
  reset(): void {
    this.failures = 0;
  }
}
