import * as grpc from '@grpc/grpc-js';
import type { Backoff } from './backoff';
import type { ChannelSecurity } from './channels';
import { describeStatus } from './channels';
import type { Logger } from './logger';
import type { Outbox } from './outbox';
import type {
  ManagerMessage,
  ReceiverMessage,
  SluiceStub,
  WireAckResult,
  WireEvent,
  WireExtendResult,
  WireShardChange,
  WireSubscribe,
  WireSubscribed,
} from './proto';
import { Signal } from './signal';
import { type SessionListener, StreamSession, type StreamStatus } from './stream-session';

/** What a connector reports to its receiver (all on the event loop). */
export interface ConnectorHooks {
  readonly receiverId: string;
  readonly logger: Logger;
  /** True once stop() began: a new stream is then opened only to deliver what is owed. */
  closing(): boolean;
  /** True after abort(): nothing may be written any more. */
  silenced(): boolean;
  subscribed(endpoint: string, subscribed: WireSubscribed): void;
  events(endpoint: string, outbox: Outbox, events: WireEvent[]): void;
  ackResult(endpoint: string, result: WireAckResult): void;
  extendResult(result: WireExtendResult): void;
  /** A stream (subscribed or not) ended: extensions sent on it fail. */
  sessionEnded(session: StreamSession): void;
  shardChange(endpoint: string, change: WireShardChange): void;
  ended(endpoint: string, status: StreamStatus, willRetry: boolean): void;
  reconnected(): void;
}

/**
 * Keeps one Subscribe stream open to one endpoint (manager): opens it, and when it ends (an error,
 * or the manager completing it) opens a new one after this endpoint's own backoff, whatever the
 * other endpoints do. Every kind of end (the manager unreachable, stopping, or answering NOT_FOUND
 * or FAILED_PRECONDITION because it leads no shard of the queue yet, or UNAUTHENTICATED) is retried
 * after the same backoff, reset once a stream is subscribed again. An outage is logged once: WARN
 * at its first failure, DEBUG for each later attempt, INFO when a stream is subscribed again.
 */
export class Connector implements SessionListener {
  readonly endpoint: string;
  /** Woken when the current stream gets subscribed or ends, and on stop(). */
  readonly changed = new Signal();
  private readonly hooks: ConnectorHooks;
  private readonly stub: SluiceStub;
  private readonly security: ChannelSecurity;
  private readonly subscribe: () => WireSubscribe;
  private readonly backoff: Backoff;
  private readonly outbox: Outbox;
  private current: StreamSession | undefined;
  private generation = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private down = false;
  private warnedCode: number | undefined;
  private failedAttempts = 0;

  constructor(
    endpoint: string,
    stub: SluiceStub,
    security: ChannelSecurity,
    subscribe: () => WireSubscribe,
    backoff: Backoff,
    outbox: Outbox,
    hooks: ConnectorHooks,
  ) {
    this.endpoint = endpoint;
    this.stub = stub;
    this.security = security;
    this.subscribe = subscribe;
    this.backoff = backoff;
    this.outbox = outbox;
    this.hooks = hooks;
  }

  start(): void {
    this.open();
  }

  /** True while the current stream is subscribed and not ended. */
  get connected(): boolean {
    return this.current !== undefined && this.current.connected;
  }

  /** The current stream, subscribed or not; undefined between streams. */
  get session(): StreamSession | undefined {
    return this.current;
  }

  /** The current stream once subscribed; undefined if none within the timeout or once stopped. */
  async awaitSubscribed(timeoutMs: number): Promise<StreamSession | undefined> {
    await this.changed.until(() => this.stopped || this.connected, timeoutMs);
    return !this.stopped && this.connected ? this.current : undefined;
  }

  /** No more streams are opened; returns the stream still open, if any. */
  stop(): StreamSession | undefined {
    this.stopped = true;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.changed.notifyAll();
    return this.current;
  }

  /** Waits until the current stream (if any) has ended; false on timeout. */
  awaitNoStream(timeoutMs: number): Promise<boolean> {
    return this.changed.until(() => this.current === undefined, timeoutMs);
  }

  private open(): void {
    this.timer = undefined;
    if (this.stopped || this.current !== undefined) {
      return;
    }
    // While closing, a new stream is only worth it to deliver acks and nacks still owed.
    if (this.hooks.closing() && !this.outbox.owesWork()) {
      return;
    }
    this.generation++;
    if (this.generation > 1) {
      this.hooks.reconnected();
    }
    const subscribe = this.subscribe();
    this.hooks.logger.debug(
      `opening stream #${this.generation} to ${this.endpoint} for queue ${subscribe.queue}`,
    );
    let call: grpc.ClientDuplexStream<ReceiverMessage, ManagerMessage>;
    try {
      call = this.stub.Subscribe(this.security.metadata());
    } catch (e) {
      // A call that cannot even start is a broken stream: the backoff loop goes on.
      this.retryLater({ code: grpc.status.UNKNOWN, details: (e as Error).message });
      return;
    }
    const session = new StreamSession(this.generation, call, this, this.outbox, () =>
      this.hooks.silenced(),
    );
    this.current = session;
    session.sendSubscribe(subscribe);
  }

  subscribed(session: StreamSession, s: WireSubscribed): void {
    if (session !== this.current) {
      return;
    }
    this.backoff.reset();
    const again = this.down ? ` again after ${this.failedAttempts} failed attempt(s)` : '';
    this.down = false;
    this.warnedCode = undefined;
    this.failedAttempts = 0;
    this.hooks.logger.info(
      `receiver ${s.receiverId} subscribed to queue ${s.queue} at ${this.endpoint}${again} ` +
        `(shard ${s.shard}, max_in_flight ${s.maxInFlight})`,
    );
    this.changed.notifyAll();
    this.hooks.subscribed(this.endpoint, s);
  }

  events(_session: StreamSession, events: WireEvent[]): void {
    this.hooks.events(this.endpoint, this.outbox, events);
  }

  ackResult(_session: StreamSession, result: WireAckResult): void {
    this.hooks.ackResult(this.endpoint, result);
  }

  extendResult(_session: StreamSession, result: WireExtendResult): void {
    this.hooks.extendResult(result);
  }

  shardChange(_session: StreamSession, change: WireShardChange): void {
    this.hooks.logger.info(
      `receiver ${this.hooks.receiverId}: manager ${this.endpoint} ` +
        `${change.serving ? 'now serves' : 'no longer serves'} shard ${change.shard} of queue ${change.queue}`,
    );
    this.hooks.shardChange(this.endpoint, change);
  }

  ended(session: StreamSession, status: StreamStatus): void {
    this.hooks.sessionEnded(session);
    if (this.current !== session) {
      return; // an older stream's late end: the current one has its own life
    }
    this.current = undefined;
    this.changed.notifyAll();
    if (this.stopped) {
      this.hooks.ended(this.endpoint, status, false);
      return;
    }
    if (this.hooks.closing()) {
      this.hooks.logger.info(
        `receiver ${this.hooks.receiverId}: stream to manager ${this.endpoint} ended while ` +
          `closing: ${describeStatus(status)}`,
      );
      if (!this.outbox.owesWork()) {
        this.hooks.ended(this.endpoint, status, false);
        return;
      }
    }
    this.hooks.ended(this.endpoint, status, true);
    this.retryLater(status);
  }

  private retryLater(status: StreamStatus): void {
    const delay = this.backoff.nextDelayMs();
    if (!this.hooks.closing()) {
      this.logEnd(status, delay);
    }
    this.timer = setTimeout(() => this.open(), delay);
  }

  /**
   * WARN for the first failure of an outage (and when a reachable manager's refusal changes, say
   * from NOT_FOUND to FAILED_PRECONDITION), DEBUG for the others until a stream is back.
   */
  private logEnd(status: StreamStatus, delayMs: number): void {
    const what = describeStatus(status);
    const refused =
      status.code === grpc.status.NOT_FOUND || status.code === grpc.status.FAILED_PRECONDITION;
    const first = !this.down || (refused && this.warnedCode !== status.code);
    this.down = true;
    this.warnedCode = status.code;
    this.failedAttempts++;
    const queue = this.subscribe().queue;
    const id = this.hooks.receiverId;
    const log = this.hooks.logger;
    if (!first) {
      log.debug(
        `receiver ${id}: stream to manager ${this.endpoint} for queue ${queue} ended again: ` +
          `${what}; attempt ${this.failedAttempts} failed, next in ${delayMs} ms`,
      );
    } else if (refused) {
      log.warn(
        `receiver ${id}: manager ${this.endpoint} does not serve queue ${queue}: ${what}; it may ` +
          `lead no shard of it yet, so retrying with backoff up to ${this.backoff.maxMs} ms ` +
          `(next in ${delayMs} ms; logged again when subscribed)`,
      );
    } else {
      log.warn(
        `receiver ${id}: stream to manager ${this.endpoint} for queue ${queue} ended: ${what}; ` +
          `reconnecting with backoff up to ${this.backoff.maxMs} ms (next in ${delayMs} ms; ` +
          `logged again when subscribed)`,
      );
    }
  }
}
