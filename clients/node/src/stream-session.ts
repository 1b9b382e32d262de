import * as grpc from '@grpc/grpc-js';
import { type Completion, refKey } from './completion';
import type { Outbox } from './outbox';
import type {
  WireExtend,
  WireExtendResult,
  ManagerMessage,
  ReceiverMessage,
  WireAckResult,
  WireEvent,
  WireEventRef,
  WireNack,
  WireShardChange,
  WireSubscribe,
  WireSubscribed,
} from './proto';

/** A stream's end: its gRPC status. */
export interface StreamStatus {
  code: grpc.status;
  details: string;
}

/** What a session tells its connector; called on the event loop, in the stream's order. */
export interface SessionListener {
  subscribed(session: StreamSession, subscribed: WireSubscribed): void;
  events(session: StreamSession, events: WireEvent[]): void;
  ackResult(session: StreamSession, result: WireAckResult): void;
  extendResult(session: StreamSession, result: WireExtendResult): void;
  shardChange(session: StreamSession, change: WireShardChange): void;
  ended(session: StreamSession, status: StreamStatus): void;
}

/**
 * One Subscribe stream to one endpoint. It remembers what it sent until the manager answers it,
 * so that an AckResult is matched to its send, and a stream's end hands back exactly what it left
 * unanswered (requeued in the outbox for the next stream). Writes stop once the stream ended, was
 * half-closed, or the receiver was aborted.
 */
export class StreamSession {
  readonly generation: number;
  private readonly call: grpc.ClientDuplexStream<ReceiverMessage, ManagerMessage>;
  private readonly listener: SessionListener;
  private readonly outbox: Outbox;
  private readonly silenced: () => boolean;
  private readonly awaiting = new Map<string, Completion[]>();
  private isSubscribedFlag = false;
  private isEndedFlag = false;
  private halfClosed = false;

  constructor(
    generation: number,
    call: grpc.ClientDuplexStream<ReceiverMessage, ManagerMessage>,
    listener: SessionListener,
    outbox: Outbox,
    silenced: () => boolean,
  ) {
    this.generation = generation;
    this.call = call;
    this.listener = listener;
    this.outbox = outbox;
    this.silenced = silenced;
    call.on('data', (m: ManagerMessage) => this.onMessage(m));
    // grpc-js emits 'error' for a non-OK status and 'status' for every end; the first one ends us.
    call.on('error', (e: grpc.ServiceError) =>
      this.end({ code: e.code ?? grpc.status.UNKNOWN, details: e.details ?? e.message }),
    );
    call.on('status', (s: grpc.StatusObject) => this.end({ code: s.code, details: s.details }));
  }

  get subscribed(): boolean {
    return this.isSubscribedFlag;
  }

  get ended(): boolean {
    return this.isEndedFlag;
  }

  /** True while subscribed and not ended: acks may go out on it. */
  get connected(): boolean {
    return this.isSubscribedFlag && !this.isEndedFlag;
  }

  sendSubscribe(subscribe: WireSubscribe): void {
    if (this.writable()) {
      this.call.write({ subscribe });
    }
  }

  /** Sends a Flow (new credits); false if the stream can no longer carry it. */
  sendFlow(maxInFlight: number): boolean {
    if (!this.writable() || !this.isSubscribedFlag) {
      return false;
    }
    this.call.write({ flow: { maxInFlight } });
    return true;
  }

  /**
   * Sends one Acks and/or one Nacks message for the batch and remembers each until answered.
   * Returns false, sending nothing, if this stream can no longer carry it.
   */
  sendCompletions(batch: Completion[]): boolean {
    if (!this.writable()) {
      return false;
    }
    const events: WireEventRef[] = [];
    const committed: WireEventRef[] = [];
    const nacks: WireNack[] = [];
    for (const c of batch) {
      const ref: WireEventRef = {
        id: c.id.toString(),
        epoch: c.epoch.toString(),
        shard: c.shard,
        deliveryToken: c.token,
      };
      if (c.type === 'committed') {
        committed.push(ref);
      } else if (c.type === 'ack') {
        events.push(ref);
      } else {
        nacks.push({
          event: ref,
          retryAfterMs: String(c.retryAfterMs),
          reason: c.reason,
          snooze: c.snooze,
        });
      }
    }
    if (events.length > 0 || committed.length > 0) {
      this.call.write({ acks: { events, committed } });
    }
    if (nacks.length > 0) {
      this.call.write({ nacks: { nacks } });
    }
    for (const c of batch) {
      if (c.type !== 'committed') {
        const key = refKey(c.shard, c.id, c.epoch);
        const sent = this.awaiting.get(key);
        if (sent === undefined) {
          this.awaiting.set(key, [c]);
        } else {
          sent.push(c);
        }
      }
    }
    if (committed.length > 0) {
      // A committed ack is a notice, not a request: the manager sends no answer for it.
      this.outbox.answered(committed.length);
    }
    return true;
  }

  /** Sends one extension; false if the stream is not subscribed or can no longer carry it. */
  sendExtend(x: WireExtend): boolean {
    if (!this.writable() || !this.isSubscribedFlag) {
      return false;
    }
    this.call.write({ extends: { extends: [x] } });
    return true;
  }

  /** Half-closes the request side: tells the manager this receiver sends nothing more. */
  halfClose(): void {
    if (this.writable()) {
      this.halfClosed = true;
      this.call.end();
    }
  }

  /** Cancels the call; safe at any time. */
  cancel(): void {
    if (!this.isEndedFlag) {
      this.call.cancel();
    }
  }

  private writable(): boolean {
    return !this.isEndedFlag && !this.halfClosed && !this.silenced();
  }

  private onMessage(m: ManagerMessage): void {
    if (this.isEndedFlag) {
      return;
    }
    switch (m.kind) {
      case 'subscribed':
        this.isSubscribedFlag = true;
        this.listener.subscribed(this, m.subscribed as WireSubscribed);
        break;
      case 'events':
        this.listener.events(this, m.events?.events ?? []);
        break;
      case 'ackResults':
        for (const r of m.ackResults?.results ?? []) {
          if (this.matchAnswer(r.event)) {
            this.outbox.answered(1);
          }
          this.listener.ackResult(this, r);
        }
        break;
      case 'extendResults':
        for (const r of m.extendResults?.results ?? []) {
          this.listener.extendResult(this, r);
        }
        break;
      case 'shardChange':
        this.listener.shardChange(this, m.shardChange as WireShardChange);
        break;
      default:
      // A message kind newer than this client: ignored rather than break the stream.
    }
  }

  private matchAnswer(ref: WireEventRef | undefined): boolean {
    if (ref === undefined || ref === null) {
      return false;
    }
    const key = refKey(ref.shard, ref.id, ref.epoch);
    const sent = this.awaiting.get(key);
    if (sent === undefined) {
      return false;
    }
    sent.shift();
    if (sent.length === 0) {
      this.awaiting.delete(key);
    }
    return true;
  }

  private end(status: StreamStatus): void {
    if (this.isEndedFlag) {
      return;
    }
    this.isEndedFlag = true;
    const unanswered: Completion[] = [];
    for (const sent of this.awaiting.values()) {
      unanswered.push(...sent);
    }
    this.awaiting.clear();
    // Whether they were applied is unknown: send them again on the next stream, where the manager
    // answers STALE for any that already took effect.
    if (!this.silenced()) {
      this.outbox.requeue(unanswered);
    }
    this.listener.ended(this, status);
  }
}
