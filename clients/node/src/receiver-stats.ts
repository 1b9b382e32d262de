/** A point-in-time snapshot of a receiver's counters. */
export interface ReceiverStats {
  /** Events delivered to this receiver, over all its streams. */
  readonly received: number;
  /** Handlings that ended in an ack (committed ones included). */
  readonly acked: number;
  /** Handlings that ended in a nack (the handler threw, or the event was refused at stop). */
  readonly nacked: number;
  /** Answers with status OK, STALE (that attempt no longer applied) and UNKNOWN (no such event). */
  readonly ackOk: number;
  readonly ackStale: number;
  readonly ackUnknown: number;
  /** Streams opened to replace one that ended, summed over the endpoints. */
  readonly reconnects: number;
  /** ShardChange notices: a manager started or stopped dispatching a shard of the queue. */
  readonly shardChanges: number;
  /** Events received whose handling has not finished. */
  readonly inFlight: number;
  /** Endpoints whose stream is subscribed right now. */
  readonly streamsConnected: number;
}

/** The live counters behind {@link ReceiverStats}. */
export class ReceiverCounters {
  received = 0;
  acked = 0;
  nacked = 0;
  ackOk = 0;
  ackStale = 0;
  ackUnknown = 0;
  reconnects = 0;
  shardChanges = 0;

  handled(outcome: 'ack' | 'nack' | 'committed'): void {
    if (outcome === 'nack') {
      this.nacked++;
    } else {
      this.acked++;
    }
  }

  result(status: string): void {
    if (status === 'OK') {
      this.ackOk++;
    } else if (status === 'STALE') {
      this.ackStale++;
    } else if (status === 'UNKNOWN') {
      this.ackUnknown++;
    }
    // UNSPECIFIED or a status newer than this client: answered, counted in no bucket.
  }

  snapshot(inFlight: number, streamsConnected: number): ReceiverStats {
    return {
      received: this.received,
      acked: this.acked,
      nacked: this.nacked,
      ackOk: this.ackOk,
      ackStale: this.ackStale,
      ackUnknown: this.ackUnknown,
      reconnects: this.reconnects,
      shardChanges: this.shardChanges,
      inFlight,
      streamsConnected,
    };
  }
}
