import type { Completion } from './completion';
import { ReceivedEvent, setExtend } from './event';
import { autoExtend, deadlineOf, type Extender } from './extender';
import type { Logger } from './logger';
import type { Outbox } from './outbox';
import type { WireEvent } from './proto';
import { RetryLater, Snooze } from './retry-later';
import { Signal } from './signal';

/** What a handler gets beside the event. */
export interface HandlerContext {
  /**
   * Aborted when the receiver stops waiting for this handling: stop() after its shutdown timeout,
   * or abort(). A handler doing long work should pass it on (fetch, timers) and give up.
   */
  readonly signal: AbortSignal;
}

/**
 * Handles one event: resolve (or return) to ack it, throw or reject to nack it (retried with the
 * queue's backoff), throw a {@link RetryLater} to have it retried no sooner than its delay, or a
 * {@link Snooze} to have it back after its delay without spending an attempt.
 */
export type EventHandler = (event: ReceivedEvent, context: HandlerContext) => unknown;

/** How a handling ended, once its answer is in the outbox. */
export interface Handled {
  readonly endpoint: string;
  readonly id: bigint;
  readonly epoch: bigint;
  readonly shard: string;
  /** `committed`: acked in the handler's own transaction (transactionalAck). */
  readonly outcome: 'ack' | 'nack' | 'committed';
  /** The event, unless its columns could not be read (then the nack's reason says why). */
  readonly event: ReceivedEvent | undefined;
  /** What the handler threw, for a nack. */
  readonly error: unknown;
  readonly retryAfterMs: number;
  readonly reason: string;
}

export const REFUSED = 'receiver is shutting down; event was not handled';

/** Deadline extension: the receiver's extender, and whether (and when) to extend by itself. */
export interface ExtendSettings {
  readonly extender: Extender;
  readonly autoExtend: boolean;
  readonly autoExtendAt: number;
}

interface Task {
  readonly receivedAt: number;
  readonly wire: WireEvent;
  readonly endpoint: string;
  readonly outbox: Outbox;
}

/**
 * Runs the handler on at most `concurrency` events at once, in the order they arrived, and turns
 * each outcome into a {@link Completion} in the outbox of the endpoint the event came from. Every
 * endpoint's stream feeds this one dispatcher, so the application sees one flow of events. The
 * waiting line is unbounded on purpose: each manager already bounds what it pushes on a stream by
 * its credits (max_in_flight), and `concurrency` bounds what runs at once.
 */
export class Dispatcher {
  /** Woken whenever a handling ends. */
  readonly idle = new Signal();
  private readonly concurrency: number;
  private readonly handler: EventHandler;
  private readonly logger: Logger;
  private readonly silenced: () => boolean;
  private readonly onHandled: (h: Handled) => void;
  private readonly extending: ExtendSettings | undefined;
  private readonly waiting: Task[] = [];
  private readonly abort = new AbortController();
  private running = 0;
  private inFlightCount = 0;
  private refusing = false;

  constructor(
    concurrency: number,
    handler: EventHandler,
    logger: Logger,
    silenced: () => boolean,
    onHandled: (h: Handled) => void,
    extending?: ExtendSettings,
  ) {
    this.extending = extending;
    this.concurrency = concurrency;
    this.handler = handler;
    this.logger = logger;
    this.silenced = silenced;
    this.onHandled = onHandled;
  }

  /** Events received and not finished (waiting or running). */
  get inFlight(): number {
    return this.inFlightCount;
  }

  dispatch(endpoint: string, outbox: Outbox, events: WireEvent[]): void {
    for (const wire of events) {
      this.inFlightCount++;
      outbox.handlingStarted();
      const task = { wire, endpoint, outbox, receivedAt: Date.now() };
      if (this.refusing) {
        // Arrived after the handlers were given up on (end of stop()): let the manager redeliver
        // it elsewhere instead of leaving it to time out.
        this.finish(task, nack(wire, 0, REFUSED), undefined, undefined);
      } else {
        this.waiting.push(task);
      }
    }
    this.pump();
  }

  /** Waits until no handling is waiting or running; false on timeout. */
  awaitIdle(timeoutMs: number): Promise<boolean> {
    return this.idle.until(() => this.inFlightCount === 0, timeoutMs);
  }

  /** Waits until no handler runs (after {@link giveUp}); false on timeout. */
  awaitNoneRunning(timeoutMs: number): Promise<boolean> {
    return this.idle.until(() => this.running === 0, timeoutMs);
  }

  /**
   * Aborts the running handlers' signals and nacks everything not started (the manager may
   * redeliver it at once); events that arrive from now on are nacked the same way.
   */
  giveUp(): void {
    this.refusing = true;
    this.abort.abort(new Error(REFUSED));
    for (const task of this.waiting.splice(0)) {
      this.finish(task, nack(task.wire, 0, REFUSED), undefined, undefined);
    }
  }

  private pump(): void {
    while (this.running < this.concurrency && this.waiting.length > 0) {
      const task = this.waiting.shift() as Task;
      this.running++;
      void this.run(task);
    }
  }

  private async run(task: Task): Promise<void> {
    const wire = task.wire;
    let event: ReceivedEvent | undefined;
    let completion: Completion;
    let error: unknown;
    let stopExtending: (() => void) | undefined;
    try {
      event = new ReceivedEvent(wire);
      const x = this.extending;
      if (x !== undefined) {
        const extend = (byMs: number): Promise<Date> =>
          x.extender.send(wire, task.outbox, byMs).then((r) => deadlineOf(wire, r));
        setExtend(event, extend);
        const holdMs = event.holdMs;
        if (x.autoExtend && holdMs > 0) {
          stopExtending = autoExtend(
            holdMs,
            x.autoExtendAt,
            task.receivedAt,
            (byMs) => (event as ReceivedEvent).extend(byMs),
            this.logger,
            `event ${wire.id} (attempt ${wire.epoch}, queue ${wire.queue}, shard ${wire.shard})`,
          );
          // Given up on (abort(), or stop() past its timeout): a handler that never returns must
          // not be extended, nor keep the process alive, any longer.
          this.abort.signal.addEventListener('abort', stopExtending, { once: true });
        }
      }
      await this.handler(event, { signal: this.abort.signal });
      completion = event.ackedInTransaction
        ? answer('committed', wire, 0, '')
        : answer('ack', wire, 0, '');
    } catch (e) {
      error = e;
      if (e instanceof RetryLater) {
        completion = nack(wire, e.retryAfterMs, e.reason, e instanceof Snooze);
      } else {
        const reason = describeError(e);
        this.logger.warn(
          `handler failed for event ${wire.id} (attempt ${wire.epoch}, shard ${wire.shard}): ${reason}`,
        );
        completion = nack(wire, 0, reason);
      }
    }
    if (stopExtending !== undefined) {
      stopExtending();
      this.abort.signal.removeEventListener('abort', stopExtending);
    }
    this.running--;
    this.finish(task, completion, event, error);
    this.pump();
  }

  private finish(
    task: Task,
    completion: Completion,
    event: ReceivedEvent | undefined,
    error: unknown,
  ): void {
    // Into the outbox before in-flight drops, so stop() never sees "idle" with an answer not queued.
    if (!this.silenced()) {
      task.outbox.add(completion);
    }
    task.outbox.handlingEnded();
    this.inFlightCount--;
    this.idle.notifyAll();
    try {
      this.onHandled({
        endpoint: task.endpoint,
        id: completion.id,
        epoch: completion.epoch,
        shard: completion.shard,
        outcome: completion.type,
        event,
        error,
        retryAfterMs: completion.retryAfterMs,
        reason: completion.reason,
      });
    } catch (e) {
      this.logger.error(`a 'handled' listener threw: ${describeError(e)}`);
    }
  }
}

function answer(
  type: Completion['type'],
  wire: WireEvent,
  retryAfterMs: number,
  reason: string,
  snooze = false,
): Completion {
  return {
    type,
    id: BigInt(wire.id),
    epoch: BigInt(wire.epoch),
    shard: wire.shard,
    token: wire.deliveryToken ?? Buffer.alloc(0),
    retryAfterMs,
    reason,
    snooze,
  };
}

function nack(wire: WireEvent, retryAfterMs: number, reason: string, snooze = false): Completion {
  return answer('nack', wire, retryAfterMs, reason, snooze);
}

/** `Name: message` of what a handler threw. */
export function describeError(e: unknown): string {
  if (e instanceof Error) {
    return e.message ? `${e.name}: ${e.message}` : e.name;
  }
  return String(e);
}
