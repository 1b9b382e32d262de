import type { Completion } from './completion';
import { Signal } from './signal';

/**
 * One endpoint's completed handlings waiting to be sent, with the count of those its manager has
 * not answered yet and of its events still being handled. Acks and nacks go back to the manager
 * that sent the event (or, while it is unreachable, through another: see {@link AckSender}), so
 * each endpoint has its own outbox and sender.
 *
 * Everything runs on the event loop: the dispatcher adds, the endpoint's sender takes, the
 * stream's callbacks mark answers. {@link changed} wakes whoever waits on this outbox (its sender
 * for work, stop() for answers).
 */
export class Outbox {
  readonly changed = new Signal();
  private queue: Completion[] = [];
  private unansweredCount = 0;
  private handlingCount = 0;

  /** An event from this endpoint went to the handlers; its completion will be added here. */
  handlingStarted(): void {
    this.handlingCount++;
  }

  /** The handling of one of this endpoint's events ended (its completion, if any, is added). */
  handlingEnded(): void {
    this.handlingCount--;
    this.changed.notifyAll();
  }

  /** True while this endpoint is owed something: an event being handled or an unanswered answer. */
  owesWork(): boolean {
    return this.handlingCount > 0 || this.unansweredCount > 0;
  }

  get unanswered(): number {
    return this.unansweredCount;
  }

  get queued(): number {
    return this.queue.length;
  }

  add(completion: Completion): void {
    this.unansweredCount++;
    this.queue.push(completion);
    this.changed.notifyAll();
  }

  /**
   * Puts back completions sent on a stream that ended before they were answered, ahead of newer
   * ones, so that the next stream sends them again (the manager answers STALE for any that took
   * effect).
   */
  requeue(completions: Completion[]): void {
    if (completions.length > 0) {
      this.queue.unshift(...completions);
      this.changed.notifyAll();
    }
  }

  /** Takes up to `max` queued completions (oldest first) and appends them to `batch`. */
  drainInto(batch: Completion[], max: number): Completion[] {
    const n = Math.max(0, Math.min(max - batch.length, this.queue.length));
    batch.push(...this.queue.splice(0, n));
    return batch;
  }

  /** Records that the manager answered `count` completions (or that they moved elsewhere). */
  answered(count: number): void {
    this.unansweredCount -= count;
    this.changed.notifyAll();
  }

  /** Waits until every added completion was answered; false on timeout. */
  awaitAllAnswered(timeoutMs: number): Promise<boolean> {
    return this.changed.until(() => this.unansweredCount <= 0, timeoutMs);
  }
}
