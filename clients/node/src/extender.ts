import type { Logger } from './logger';
import type { Outbox } from './outbox';
import type { WireEvent, WireExtend, WireExtendResult } from './proto';

/** How long an extension waits for its answer before it fails (the next try sends it again). */
export const EXTEND_ANSWER_TIMEOUT_MS = 10_000;

/** The statuses a manager refuses an extension with (ExtendStatus, without its prefix). */
export type ExtendRefusal = 'STALE' | 'UNKNOWN' | 'LIMIT' | 'UNSPECIFIED';

/**
 * A manager refused to extend an event's deadline: `STALE` (the attempt is over: acked, taken back,
 * fired again), `UNKNOWN` (no such event) or `LIMIT` (at the queue's max_hold; `deadline` is the
 * deadline the row holds).
 */
export class ExtensionRefused extends Error {
  readonly status: ExtendRefusal;
  readonly deadline: Date | undefined;

  constructor(status: ExtendRefusal, message: string, deadline?: Date) {
    super(message);
    this.name = 'ExtensionRefused';
    this.status = status;
    this.deadline = deadline;
  }
}

/** One stream as the extender sees it: the outbox of its endpoint, and a way to send on it. */
export interface ExtendRoute {
  readonly outbox: Outbox;
  /** Sends the extension on this endpoint's current stream; undefined if not subscribed. */
  send(x: WireExtend): object | undefined;
}

interface Waiting {
  resolve(r: WireExtendResult): void;
  reject(e: Error): void;
  on: object | undefined;
  timer: NodeJS.Timeout | undefined;
}

function key(shard: string, id: string, epoch: string): string {
  return `${shard}\u0000${id}\u0000${epoch}`;
}

/**
 * Sends a receiver's deadline extensions and matches the managers' answers (ExtendResults) to them,
 * as the Java SDK's Extender: on the stream of the manager that delivered the event when it is
 * subscribed, else on any subscribed stream; an extension fails at once when its stream ends, and
 * after {@link EXTEND_ANSWER_TIMEOUT_MS} without an answer.
 */
export class Extender {
  private readonly waiting = new Map<string, Waiting>();
  routes: () => ExtendRoute[] = () => [];

  /** Asks to move `wire`'s deadline to now + `byMs`; resolves to the manager's answer. */
  send(wire: WireEvent, origin: Outbox, byMs: number): Promise<WireExtendResult> {
    const k = key(wire.shard, String(wire.id), String(wire.epoch));
    return new Promise<WireExtendResult>((resolve, reject) => {
      const w: Waiting = { resolve, reject, on: undefined, timer: undefined };
      const before = this.waiting.get(k);
      this.waiting.set(k, w);
      if (before !== undefined) {
        // An earlier extension of this attempt not answered yet: this one's answer is its answer.
        clearTimeout(before.timer);
        w.resolve = (r) => {
          resolve(r);
          before.resolve(r);
        };
        w.reject = (e) => {
          reject(e);
          before.reject(e);
        };
      }
      const x: WireExtend = {
        event: { id: String(wire.id), epoch: String(wire.epoch), shard: wire.shard, deliveryToken: wire.deliveryToken ?? Buffer.alloc(0) },
        extendByMs: String(Math.max(1, Math.round(byMs))),
        timeFiredNs: String(wire.timeFiredNs),
      };
      const on = this.sendOn(x, origin);
      if (on === undefined) {
        this.waiting.delete(k);
        w.reject(
          new Error(
            `no manager stream is subscribed: the extension of event ${wire.id} (shard ${wire.shard}) was not sent`,
          ),
        );
        return;
      }
      w.on = on;
      w.timer = setTimeout(() => {
        if (this.waiting.get(k) === w) {
          this.waiting.delete(k);
          w.reject(
            new Error(
              `no answer to the extension of event ${wire.id} within ${EXTEND_ANSWER_TIMEOUT_MS / 1000} s`,
            ),
          );
        }
      }, EXTEND_ANSWER_TIMEOUT_MS);
      w.timer.unref?.();
    });
  }

  private sendOn(x: WireExtend, origin: Outbox): object | undefined {
    const all = this.routes();
    for (const r of all) {
      if (r.outbox === origin) {
        const on = r.send(x);
        if (on !== undefined) {
          return on;
        }
      }
    }
    for (const r of all) {
      if (r.outbox !== origin) {
        const on = r.send(x);
        if (on !== undefined) {
          return on;
        }
      }
    }
    return undefined;
  }

  /** The stream `on` ended: the extensions waiting for its answer fail now. */
  streamEnded(on: object): void {
    for (const [k, w] of [...this.waiting]) {
      if (w.on === on) {
        this.waiting.delete(k);
        clearTimeout(w.timer);
        w.reject(new Error(`the stream the extension of event ${k.split('\u0000')[1]} went on ended`));
      }
    }
  }

  /** A manager's answer. */
  answered(r: WireExtendResult): void {
    const e = r.event;
    if (e === undefined || e === null) {
      return;
    }
    const k = key(e.shard, String(e.id), String(e.epoch));
    const w = this.waiting.get(k);
    if (w !== undefined) {
      this.waiting.delete(k);
      clearTimeout(w.timer);
      w.resolve(r);
    }
  }
}

/** Turns an answer into the new deadline, or an {@link ExtensionRefused}. */
export function deadlineOf(wire: WireEvent, r: WireExtendResult): Date {
  const status = String(r.status).replace(/^EXTEND_STATUS_/, '');
  const ns = BigInt(r.timeDeadlineNs ?? '0');
  const deadline = ns > 0n ? new Date(Number(ns / 1_000_000n)) : undefined;
  if (status === 'OK' && deadline !== undefined) {
    return deadline;
  }
  const what = `event ${wire.id} (attempt ${wire.epoch}, shard ${wire.shard})`;
  const why =
    status === 'STALE'
      ? 'the attempt is over (acked, taken back or fired again)'
      : status === 'UNKNOWN'
        ? 'no such event'
        : status === 'LIMIT'
          ? `at the queue's max_hold (deadline ${deadline?.toISOString()})`
          : `status ${r.status}`;
  throw new ExtensionRefused(status as ExtendRefusal, `extension of ${what} refused: ${why}`, deadline);
}

/**
 * Extends one handling's deadline while it runs, as the Java SDK's AutoExtend: once `share` of the
 * hold (deadline − fire, the queue's ack_wait) has passed since the event arrived, asks for one more
 * hold from now, and again each time that share of the new hold has passed, until stopped or
 * refused. A failure is logged and tried again sooner; an answer slower than the share of the
 * hold is not waited for (the next try supersedes it). Returns the function that stops it.
 */
export function autoExtend(
  holdMs: number,
  share: number,
  receivedAt: number,
  extend: (byMs: number) => Promise<Date>,
  logger: Logger,
  what: string,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (delayMs: number): void => {
    if (!stopped) {
      timer = setTimeout(run, Math.max(0, delayMs));
      timer.unref?.(); // an extension alone never keeps the process alive
    }
  };
  const run = (): void => {
    if (stopped) {
      return;
    }
    const patienceMs = Math.max(200, share * holdMs);
    let settled = false;
    const patience = setTimeout(() => {
      if (!settled) {
        settled = true;
        logger.debug(`${what}: extension not answered within ${patienceMs} ms, trying again`);
        schedule(0);
      }
    }, patienceMs);
    patience.unref?.();
    extend(holdMs).then(
      () => {
        clearTimeout(patience);
        if (!settled) {
          settled = true;
          schedule(share * holdMs);
        }
      },
      (e: unknown) => {
        clearTimeout(patience);
        if (settled) {
          return;
        }
        settled = true;
        if (e instanceof ExtensionRefused) {
          logger.warn(`${what}: automatic extension stopped: ${e.message}`);
          stopped = true;
        } else {
          logger.warn(`${what}: extension failed, trying again: ${(e as Error)?.message ?? String(e)}`);
          schedule(Math.min(1000, (share * holdMs) / 2));
        }
      },
    );
  };
  schedule(receivedAt + share * holdMs - Date.now());
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
