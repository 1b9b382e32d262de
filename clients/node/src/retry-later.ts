/**
 * Thrown (or rejected with) by a handler to nack an event and ask the manager to retry it no
 * sooner than `delayMs` from now. A delay of 0 means "the queue's backoff", as any other error.
 */
export class RetryLater extends Error {
  readonly delayMs: number;

  constructor(delayMs: number, reason = '') {
    super(reason);
    if (!Number.isFinite(delayMs) || delayMs < 0) {
      throw new RangeError(`RetryLater delay must be >= 0 ms, was ${delayMs}`);
    }
    this.name = 'RetryLater';
    this.delayMs = delayMs;
  }

  /** The reason sent to the manager with the nack. */
  get reason(): string {
    return this.message;
  }

  /**
   * The nack's retry_after_ms: whole milliseconds, a sub-millisecond delay rounded up to 1, since
   * 0 on the wire means "the queue's backoff".
   */
  get retryAfterMs(): number {
    return this.delayMs === 0 ? 0 : Math.max(1, Math.ceil(this.delayMs));
  }
}

/**
 * Thrown (or rejected with) by a handler to put its event back to pending for `delayMs` (more than
 * 0) *without spending an attempt*: "not yet", not "failed". The queue table counts snoozes in its
 * optional `snoozes` column (an event's attempts are then `epoch - snoozes`); an event snoozed
 * `max_snoozes` times, or one of a table without that column, has the snooze count as a failed
 * attempt, as a {@link RetryLater} would. The snoozed delivery is over: a late ack of it changes
 * nothing, and the event is delivered again at the next epoch.
 */
export class Snooze extends RetryLater {
  constructor(delayMs: number, reason = '') {
    super(delayMs, reason);
    if (!(delayMs > 0)) {
      throw new RangeError(`a snooze's delay must be > 0 ms, was ${delayMs}`);
    }
    this.name = 'Snooze';
  }
}
