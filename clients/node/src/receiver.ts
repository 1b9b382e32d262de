import { EventEmitter } from 'node:events';
import { AckSender } from './ack-sender';
import { Backoff } from './backoff';
import { ChannelSecurity, describeStatus, statusName } from './channels';
import { Connector } from './connector';
import { Dispatcher } from './dispatcher';
import { Extender } from './extender';
import type { Logger } from './logger';
import { Outbox } from './outbox';
import type { SluiceStub, WireAckResult, WireSubscribe } from './proto';
import {
  type AckResultInfo,
  positiveInt,
  type ReceiverEvents,
  type ReceiverOptions,
  receiverSettings,
} from './receiver-options';
import { ReceiverCounters, type ReceiverStats } from './receiver-stats';
import type { StreamStatus } from './stream-session';

/** Bound of each wait in stop() that the managers, not the handler, must end. */
export const PROTOCOL_TIMEOUT_MS = 5000;

interface Endpoint {
  readonly name: string;
  readonly stub: SluiceStub;
  readonly outbox: Outbox;
  readonly connector: Connector;
  readonly sender: AckSender;
}

type State = 'new' | 'running' | 'closing' | 'closed';

/**
 * Receives the events of one queue from every manager and hands them to a handler, as the Java
 * SDK's SluiceReceiver does (README, "A receiver"). One Subscribe stream per target, each with
 * its own reconnect backoff, all feeding the same handlers; an event's ack or nack goes back to the
 * manager that sent it, or through another connected one if that manager stays unreachable for a
 * second.
 *
 * Everything runs on Node's event loop: gRPC callbacks queue work and update counters, handlers
 * are awaited (at most `concurrency` at once), each endpoint's sender loop writes that endpoint's
 * answers. No state is shared with another thread.
 */
export class SluiceReceiver extends EventEmitter<ReceiverEvents> {
  readonly receiverId: string;
  readonly queue: string;
  private readonly targets: string[];
  private readonly security: ChannelSecurity;
  private readonly logger: Logger;
  private readonly keyRange: string;
  private readonly shutdownTimeoutMs: number;
  private readonly backoffBounds: { minMs: number; maxMs: number };
  private readonly counters = new ReceiverCounters();
  private readonly dispatcher: Dispatcher;
  private readonly extender = new Extender();
  private maxInFlightValue: number;
  private endpoints: Endpoint[] = [];
  private state: State = 'new';
  private silenced = false; // abort() was called: nothing is written any more
  private sendersDone = false; // stop() answered what it could: senders exit
  private stopping: Promise<void> | undefined;

  /** Checks the options (throwing a TypeError or RangeError naming the first bad one). */
  constructor(options: ReceiverOptions) {
    super();
    const s = receiverSettings(options);
    this.targets = s.targets;
    this.queue = s.queue;
    this.receiverId = s.receiverId;
    this.maxInFlightValue = s.maxInFlight;
    this.keyRange = s.keyRange;
    this.backoffBounds = s.backoff;
    this.shutdownTimeoutMs = s.shutdownTimeoutMs;
    this.logger = s.logger;
    this.security = new ChannelSecurity(options);
    this.dispatcher = new Dispatcher(
      s.concurrency,
      s.handler,
      this.logger,
      () => this.silenced,
      (h) => {
        this.counters.handled(h.outcome);
        this.emit('handled', h);
      },
      { extender: this.extender, autoExtend: s.autoExtend, autoExtendAt: s.autoExtendAt },
    );
    this.extender.routes = () =>
      this.endpoints.map((e) => ({
        outbox: e.outbox,
        send: (x) => {
          const session = e.connector.session;
          return session !== undefined && session.sendExtend(x) ? session : undefined;
        },
      }));
  }

  /** Connects to every target in the background and returns at once; streams retry until stop(). */
  start(): this {
    if (this.state === 'running') {
      return this;
    }
    if (this.state !== 'new') {
      throw new Error(`receiver ${this.receiverId} was already stopped`);
    }
    const stubs: SluiceStub[] = [];
    try {
      for (const t of this.targets) {
        stubs.push(this.security.open(t));
      }
    } catch (e) {
      stubs.forEach((s) => s.close());
      throw e;
    }
    this.endpoints = this.targets.map((name, i) => this.endpoint(name, stubs[i]));
    this.state = 'running';
    for (const e of this.endpoints) {
      e.connector.start();
      void e.sender.run();
    }
    return this;
  }

  /** Resolves true once a stream is subscribed on at least one manager (false on timeout). */
  async awaitSubscribed(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.state === 'running') {
      if (this.streamsConnected() > 0) {
        return true;
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.endpoints.length === 0) {
        return false;
      }
      await Promise.race(this.endpoints.map((e) => e.connector.changed.wait(left)));
    }
    return false;
  }

  /** The credits asked of each stream; changing it sends a Flow on every subscribed stream. */
  get maxInFlight(): number {
    return this.maxInFlightValue;
  }

  setMaxInFlight(maxInFlight: number): void {
    this.maxInFlightValue = positiveInt('maxInFlight', maxInFlight);
    for (const e of this.endpoints) {
      e.connector.session?.sendFlow(this.maxInFlightValue);
    }
  }

  stats(): ReceiverStats {
    return this.counters.snapshot(this.dispatcher.inFlight, this.streamsConnected());
  }

  /**
   * Graceful stop; idempotent (every call returns the same promise). Tells every manager to send
   * nothing new (NotifyShutdown), lets running handlers finish (aborting their signal after
   * shutdownTimeoutMs), delivers their acks and nacks, then half-closes the streams and closes the
   * channels. Do not await it from a handler: it waits for that very handling.
   */
  stop(): Promise<void> {
    if (this.stopping === undefined) {
      this.stopping = this.drainAndClose();
    }
    return this.stopping;
  }

  /**
   * Simulates a crash: cancels every stream, aborts the handlers' signals and sends nothing more.
   * The managers release what this receiver held at once, for redelivery.
   */
  abort(): void {
    this.silenced = true;
    this.sendersDone = true;
    const was = this.state;
    this.state = 'closed';
    if (was === 'new' || was === 'closed') {
      return;
    }
    for (const e of this.endpoints) {
      e.connector.stop()?.cancel();
    }
    this.dispatcher.giveUp();
    this.release();
  }

  private async drainAndClose(): Promise<void> {
    if (this.state !== 'running') {
      this.state = 'closed';
      return;
    }
    this.state = 'closing';
    try {
      await this.notifyShutdown();
      if (!(await this.dispatcher.awaitIdle(this.shutdownTimeoutMs))) {
        this.logger.warn(
          `receiver ${this.receiverId}: ${this.dispatcher.inFlight} events still waiting or being ` +
            `handled after ${this.shutdownTimeoutMs} ms; aborting the handlers' signal`,
        );
        this.dispatcher.giveUp();
        if (!(await this.dispatcher.awaitNoneRunning(PROTOCOL_TIMEOUT_MS))) {
          this.logger.warn(`receiver ${this.receiverId}: handlers ignored the abort; leaving them`);
        }
      }
      await this.awaitAnswered();
      this.sendersDone = true;
      const open = this.endpoints.map((e) => e.connector.stop());
      this.endpoints.forEach((e) => e.outbox.changed.notifyAll());
      open.forEach((s) => s?.halfClose());
      const deadline = Date.now() + PROTOCOL_TIMEOUT_MS;
      for (let i = 0; i < this.endpoints.length; i++) {
        const e = this.endpoints[i];
        const s = open[i];
        if (s !== undefined && !(await e.connector.awaitNoStream(deadline - Date.now()))) {
          this.logger.warn(
            `receiver ${this.receiverId}: manager ${e.name} did not end the stream within ` +
              `${PROTOCOL_TIMEOUT_MS} ms; cancelling it`,
          );
          s.cancel();
        }
      }
    } finally {
      this.sendersDone = true;
      this.state = 'closed';
      this.release();
    }
  }

  /** Tells every endpoint at once, then waits for all answers within one bound. */
  private async notifyShutdown(): Promise<void> {
    await Promise.all(
      this.endpoints.map(
        (e) =>
          new Promise<void>((resolve) => {
            // The response's counters are informational; depending on none keeps this client
            // loosely coupled to the manager's version.
            e.stub.NotifyShutdown(
              { receiverId: this.receiverId },
              this.security.metadata(),
              { deadline: Date.now() + PROTOCOL_TIMEOUT_MS },
              (err) => {
                if (err) {
                  this.logger.warn(
                    `receiver ${this.receiverId}: NotifyShutdown to ${e.name} failed: ` +
                      `${describeStatus({ code: err.code, details: err.details })}; closing anyway`,
                  );
                } else {
                  this.logger.info(`receiver ${this.receiverId}: manager ${e.name} notified of shutdown`);
                }
                resolve();
              },
            );
          }),
      ),
    );
  }

  /**
   * One bound for all endpoints: a manager that is down costs PROTOCOL_TIMEOUT_MS once. Answers
   * of a manager that is down move to another endpoint meanwhile, so sweep until every outbox is
   * answered at the same time, or the bound is reached.
   */
  private async awaitAnswered(): Promise<void> {
    const deadline = Date.now() + PROTOCOL_TIMEOUT_MS;
    const owed = (): boolean => this.endpoints.some((e) => e.outbox.unanswered > 0);
    while (owed() && Date.now() < deadline) {
      for (const e of this.endpoints) {
        await e.outbox.awaitAllAnswered(deadline - Date.now());
      }
    }
    for (const e of this.endpoints) {
      if (e.outbox.unanswered > 0) {
        this.logger.warn(
          `receiver ${this.receiverId}: ${e.outbox.unanswered} acks/nacks not answered by ` +
            `manager ${e.name} within ${PROTOCOL_TIMEOUT_MS} ms`,
        );
      }
    }
  }

  private release(): void {
    for (const e of this.endpoints) {
      e.connector.stop();
      e.outbox.changed.notifyAll();
      e.stub.close();
    }
  }

  private streamsConnected(): number {
    return this.endpoints.filter((e) => e.connector.connected).length;
  }

  private endpoint(name: string, stub: SluiceStub): Endpoint {
    const outbox = new Outbox();
    const subscribe = (): WireSubscribe => ({
      queue: this.queue,
      receiverId: this.receiverId,
      maxInFlight: this.maxInFlightValue,
      keyRange: this.keyRange,
    });
    const connector = new Connector(
      name,
      stub,
      this.security,
      subscribe,
      new Backoff(this.backoffBounds.minMs, this.backoffBounds.maxMs),
      outbox,
      {
        receiverId: this.receiverId,
        logger: this.logger,
        closing: () => this.state !== 'running',
        silenced: () => this.silenced,
        subscribed: (endpoint, s) =>
          this.emit('subscribed', {
            endpoint,
            queue: s.queue,
            shards: s.shard === '' ? [] : s.shard.split(','),
            maxInFlight: s.maxInFlight,
          }),
        events: (endpoint, box, events) => {
          this.counters.received += events.length;
          this.dispatcher.dispatch(endpoint, box, events);
        },
        ackResult: (endpoint, r) => this.ackResult(endpoint, r),
        extendResult: (r) => this.extender.answered(r),
        sessionEnded: (session) => this.extender.streamEnded(session),
        shardChange: (endpoint, c) => {
          this.counters.shardChanges++;
          this.emit('shardChange', { endpoint, ...c });
        },
        ended: (endpoint, status, willRetry) => this.streamEnded(endpoint, status, willRetry),
        reconnected: () => this.counters.reconnects++,
      },
    );
    const sender = new AckSender(
      name,
      outbox,
      connector,
      () => this.silenced || this.sendersDone,
      (self) => this.endpoints.find((e) => e.outbox !== self && e.connector.connected)?.outbox,
      this.logger,
    );
    return { name, stub, outbox, connector, sender };
  }

  private ackResult(endpoint: string, r: WireAckResult): void {
    const status = String(r.status).replace(/^ACK_STATUS_/, '') as AckResultInfo['status'];
    this.counters.result(status);
    this.emit('ackResult', {
      endpoint,
      id: BigInt(r.event?.id ?? 0),
      epoch: BigInt(r.event?.epoch ?? 0),
      shard: r.event?.shard ?? '',
      status,
      outcome: r.outcome,
    });
  }

  private streamEnded(endpoint: string, status: StreamStatus, willRetry: boolean): void {
    this.emit('streamEnded', {
      endpoint,
      code: status.code,
      codeName: statusName(status.code),
      details: status.details,
      willRetry,
    });
  }
}
