/**
 * A handling's outcome, waiting in an endpoint's outbox to be sent: an ack, a nack, or an ack the
 * handler already committed in its own transaction (sent as `acks.committed`, never answered).
 */
export interface Completion {
  readonly type: 'ack' | 'nack' | 'committed';
  readonly id: bigint;
  readonly epoch: bigint;
  readonly shard: string;
  /** The event's delivery_token, sent back as received. */
  readonly token: Buffer;
  readonly retryAfterMs: number;
  readonly reason: string;
  /** A nack that spends no attempt ({@link Snooze}). */
  readonly snooze: boolean;
}

/** Matches an AckResult to what was sent: shard, id and epoch. */
export function refKey(shard: string, id: bigint | string, epoch: bigint | string): string {
  return `${shard}\u0000${id}\u0000${epoch}`;
}
