/**
 * A receiver's options, the events it emits, and the check of the options (with their defaults),
 * as the Java SDK's SluiceReceiverBuilder checks its settings.
 */
import * as os from 'node:os';
import { randomInt } from 'node:crypto';
import { Backoff } from './backoff';
import type { ConnectionOptions } from './channels';
import type { EventHandler, Handled } from './dispatcher';
import { checkKeyRange } from './key-range';
import { type Logger, stderrLogger } from './logger';

export interface ReceiverOptions extends ConnectionOptions {
  /**
   * Every manager of the deployment, `host:port` each (or one): the receiver keeps one stream to
   * each, since each leads some of the shards.
   */
  targets: string | string[];
  queue: string;
  handler: EventHandler;
  /** Stable across restarts of this process; default `<hostname>-<pid>-<random>`. */
  receiverId?: string;
  /** Handlers running at once. Default 8. */
  concurrency?: number;
  /** Credits of each stream (per manager): unacked events it may hold. Default: concurrency. */
  maxInFlight?: number;
  /**
   * Extend the deadline of an event whose handler runs long, while it runs (default true): at
   * `autoExtendAt` of the hold (the queue's ack_wait) the receiver asks for one more hold, and again
   * until the handler ends. Off, a handler may still call `event.extend(ms)`.
   */
  autoExtend?: boolean;
  /** The share of the hold after which an extension is asked for, in (0, 1). Default 0.5. */
  autoExtendAt?: number;
  /** Only shards overlapping this Vitess key range ("-80", "80-"); default every shard. */
  keyRange?: string;
  /** Reconnect backoff bounds per endpoint. Default 100 ms to 5000 ms. */
  reconnectBackoff?: { minMs: number; maxMs: number };
  /** How long stop() lets handlers run before aborting their signal. Default 30000 ms. */
  shutdownTimeoutMs?: number;
  /** Where the receiver logs. Default: warnings and errors to stderr. */
  logger?: Logger;
}

/** Emitted once a manager answered Subscribed on a stream. */
export interface SubscribedInfo {
  endpoint: string;
  queue: string;
  /** The shards that manager dispatches the queue for now (may be none). */
  shards: string[];
  /** The credits granted (per-principal limits may grant fewer than asked). */
  maxInFlight: number;
}

/** The manager's answer to one ack or nack. */
export interface AckResultInfo {
  endpoint: string;
  id: bigint;
  epoch: bigint;
  shard: string;
  /** OK: applied. STALE: that attempt no longer applied, nothing changed. UNKNOWN: no such event. */
  status: 'OK' | 'STALE' | 'UNKNOWN' | 'UNSPECIFIED';
  /** What it did: ACKED, RETRY, DEAD (empty when nothing changed). */
  outcome: string;
}

/** A stream that ended, with its gRPC status. */
export interface StreamEndedInfo {
  endpoint: string;
  code: number;
  /** The status's name: `UNAUTHENTICATED`, `UNAVAILABLE`, `OK`, ... */
  codeName: string;
  details: string;
  /** Whether the receiver opens a new stream to that endpoint after its backoff. */
  willRetry: boolean;
}

export interface ShardChangeInfo {
  endpoint: string;
  queue: string;
  shard: string;
  serving: boolean;
}

/** The events a receiver emits (listeners run on the event loop; keep them short). */
export interface ReceiverEvents {
  subscribed: [SubscribedInfo];
  handled: [Handled];
  ackResult: [AckResultInfo];
  streamEnded: [StreamEndedInfo];
  shardChange: [ShardChangeInfo];
}

/** The options checked, with their defaults filled in. */
export interface ReceiverSettings {
  readonly targets: string[];
  readonly queue: string;
  readonly handler: EventHandler;
  readonly receiverId: string;
  readonly concurrency: number;
  readonly maxInFlight: number;
  readonly autoExtend: boolean;
  readonly autoExtendAt: number;
  readonly keyRange: string;
  readonly backoff: { readonly minMs: number; readonly maxMs: number };
  readonly shutdownTimeoutMs: number;
  readonly logger: Logger;
}

/** Checks the options; throws a TypeError or RangeError naming the first bad one. */
export function receiverSettings(options: ReceiverOptions): ReceiverSettings {
  const o = options ?? ({} as ReceiverOptions);
  const targets = checkTargets(o.targets);
  if (typeof o.queue !== 'string' || o.queue.trim() === '') {
    throw new TypeError('queue is required');
  }
  if (typeof o.handler !== 'function') {
    throw new TypeError('handler is required (a function of the event)');
  }
  if (o.receiverId !== undefined && o.receiverId.trim() === '') {
    throw new TypeError('receiverId must not be blank');
  }
  const concurrency = positiveInt('concurrency', o.concurrency ?? 8);
  const backoff = o.reconnectBackoff ?? { minMs: 100, maxMs: 5000 };
  new Backoff(backoff.minMs, backoff.maxMs); // checks the bounds
  const shutdownTimeoutMs = o.shutdownTimeoutMs ?? 30_000;
  if (!Number.isFinite(shutdownTimeoutMs) || shutdownTimeoutMs < 0) {
    throw new RangeError(`shutdownTimeoutMs must be >= 0, was ${shutdownTimeoutMs}`);
  }
  if (o.autoExtend !== undefined && typeof o.autoExtend !== 'boolean') {
    throw new TypeError(`autoExtend must be a boolean, was ${String(o.autoExtend)}`);
  }
  const autoExtendAt = o.autoExtendAt ?? 0.5;
  if (typeof autoExtendAt !== 'number' || !(autoExtendAt > 0 && autoExtendAt < 1)) {
    throw new RangeError(`autoExtendAt must be in (0, 1), was ${String(autoExtendAt)}`);
  }
  return {
    targets,
    queue: o.queue,
    autoExtend: o.autoExtend ?? true,
    autoExtendAt,
    handler: o.handler,
    receiverId: o.receiverId ?? defaultReceiverId(),
    concurrency,
    maxInFlight: positiveInt('maxInFlight', o.maxInFlight ?? concurrency),
    keyRange: checkKeyRange(o.keyRange),
    backoff: { minMs: backoff.minMs, maxMs: backoff.maxMs },
    shutdownTimeoutMs,
    logger: o.logger ?? stderrLogger(),
  };
}

function checkTargets(targets: string | string[] | undefined): string[] {
  const list = typeof targets === 'string' ? [targets] : targets;
  if (!Array.isArray(list) || list.length === 0) {
    throw new TypeError('targets is required: every manager, "host:port" each');
  }
  const seen = new Set<string>();
  list.forEach((t, i) => {
    if (typeof t !== 'string' || t.trim() === '') {
      throw new TypeError(list.length === 1 ? 'target must not be blank' : `targets[${i}] is blank`);
    }
    if (seen.has(t)) {
      // Two streams of one receiver to one manager: a typo, not a way to get more credits.
      throw new TypeError(`targets lists ${t} twice`);
    }
    seen.add(t);
  });
  return [...list];
}

export function positiveInt(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 1) {
    throw new RangeError(`${name} must be an integer >= 1, was ${n}`);
  }
  return n;
}

function defaultReceiverId(): string {
  return `${os.hostname()}-${process.pid}-${randomInt(0x100000, 0x1000000).toString(16)}`;
}
