/**
 * The dispatcher: at most `concurrency` handlers at once, in arrival order; each outcome lands in
 * the outbox of the endpoint the event came from, with its delivery token; stop's give-up nacks
 * what never started.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryLater, stderrLogger } from '../src/index';
import { Dispatcher, type EventHandler, type Handled, REFUSED } from '../src/dispatcher';
import { Outbox } from '../src/outbox';
import type { WireEvent } from '../src/proto';

function wire(id: number): WireEvent {
  return {
    id: String(id),
    epoch: '1',
    queue: 'q',
    shard: 's1',
    tenant: '',
    priority: 0,
    timeDueNs: '0',
    timeCreatedNs: '0',
    timeFiredNs: '0',
    columns: {},
    deliveryToken: Buffer.from(`token-${id}`),
    lastAttempt: false,
  };
}

function dispatcher(concurrency: number, handler: EventHandler, handled: Handled[] = []): Dispatcher {
  return new Dispatcher(concurrency, handler, stderrLogger('error'), () => false, (h) => handled.push(h));
}

describe('Dispatcher', () => {
  it('runs at most `concurrency` handlers at once, in arrival order', async () => {
    let running = 0;
    let most = 0;
    const order: bigint[] = [];
    const d = dispatcher(3, async (e) => {
      order.push(e.id);
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
    });
    const outbox = new Outbox();
    d.dispatch('m1', outbox, Array.from({ length: 20 }, (_, i) => wire(i + 1)));
    assert.equal(d.inFlight, 20);
    assert.ok(outbox.owesWork());
    assert.ok(await d.awaitIdle(5000));
    assert.equal(most, 3);
    assert.deepEqual(order, Array.from({ length: 20 }, (_, i) => BigInt(i + 1)));
    assert.equal(outbox.unanswered, 20);
    const batch = outbox.drainInto([], 1000);
    assert.ok(batch.every((c) => c.type === 'ack'));
    assert.deepEqual(batch[0].token, Buffer.from('token-1'));
  });

  it('acks a return, nacks a throw, and nacks RetryLater with its delay', async () => {
    const handled: Handled[] = [];
    const d = dispatcher(
      2,
      (e) => {
        if (e.id === 2n) {
          throw new TypeError('bad payload');
        }
        if (e.id === 3n) {
          return Promise.reject(new RetryLater(2500, 'rate limited'));
        }
        return undefined;
      },
      handled,
    );
    const outbox = new Outbox();
    d.dispatch('m1', outbox, [wire(1), wire(2), wire(3)]);
    assert.ok(await d.awaitIdle(5000));
    // Completions land in the order handlings end; compare them by id.
    const [a, b, c] = outbox.drainInto([], 10).sort((x, y) => Number(x.id - y.id));
    assert.deepEqual([a.type, a.id], ['ack', 1n]);
    assert.deepEqual([b.type, b.retryAfterMs, b.reason], ['nack', 0, 'TypeError: bad payload']);
    assert.deepEqual([c.type, c.retryAfterMs, c.reason], ['nack', 2500, 'rate limited']);
    handled.sort((x, y) => Number(x.id - y.id));
    assert.deepEqual(handled.map((h) => [h.id, h.outcome, h.endpoint]), [
      [1n, 'ack', 'm1'],
      [2n, 'nack', 'm1'],
      [3n, 'nack', 'm1'],
    ]);
    assert.ok(handled[1].error instanceof TypeError);
  });

  it('gives up: aborts running handlers and nacks what never started, and what comes later', async () => {
    const signals: AbortSignal[] = [];
    const d = dispatcher(1, (_e, ctx) => {
      signals.push(ctx.signal);
      return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    });
    const first = new Outbox();
    const second = new Outbox();
    d.dispatch('m1', first, [wire(1), wire(2)]);
    d.dispatch('m2', second, [wire(3)]);
    await new Promise((r) => setImmediate(r));
    assert.equal(signals.length, 1);
    d.giveUp();
    assert.ok(signals[0].aborted);
    assert.ok(await d.awaitIdle(1000));
    d.dispatch('m2', second, [wire(4)]);
    const fromFirst = first.drainInto([], 10);
    const fromSecond = second.drainInto([], 10);
    assert.deepEqual(fromFirst.map((c) => [c.id, c.reason]), [
      [2n, REFUSED],
      [1n, 'Error: aborted'],
    ]);
    assert.deepEqual(fromSecond.map((c) => [c.id, c.type, c.reason]), [
      [3n, 'nack', REFUSED],
      [4n, 'nack', REFUSED],
    ]);
    assert.equal(d.inFlight, 0);
  });
});
