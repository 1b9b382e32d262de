/**
 * The receiver against a real manager: every event acked once, nacks and RetryLater redelivered at
 * the next epoch, a late ack reported STALE, a graceful stop that answers what it holds, an abort
 * whose events come back, and Flow.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  EventProducer,
  type AckResultInfo,
  type ReceivedEvent,
  RetryLater,
  SluiceReceiver,
  type StreamEndedInfo,
} from '../src/index';
import { eventually, integrationSkip, ManagerProcess, queueTableSql, TestDatabase } from './support/cluster';

const QUEUES = {
  plain: queueTableSql('plain_q', ['`order_id` BIGINT NOT NULL', '`kind` VARCHAR(32) NOT NULL']),
  nack: queueTableSql('nack_q', ['`n` INT NOT NULL'], 'sluice_queue min_backoff=50ms'),
  stale: queueTableSql('stale_q', ['`n` INT NOT NULL'], 'sluice_queue ack_wait=1s min_backoff=0ms'),
  stop: queueTableSql('stop_q', ['`n` INT NOT NULL']),
  abort: queueTableSql('abort_q', ['`n` INT NOT NULL'], 'sluice_queue min_backoff=0ms'),
};

describe('receiving from a real manager', { timeout: 300_000 }, async () => {
  const skip = await integrationSkip();
  let db: TestDatabase;
  let manager: ManagerProcess;
  const receivers: SluiceReceiver[] = [];

  function receiver(queue: string, handler: (e: ReceivedEvent) => unknown, extra = {}): SluiceReceiver {
    const r = new SluiceReceiver({ targets: [manager.target], queue, receiverId: `it-${queue}`, handler, ...extra });
    receivers.push(r);
    return r;
  }

  async function insert(queue: string, rows: Array<Record<string, unknown>>): Promise<bigint[]> {
    const c = await db.connect();
    try {
      await c.beginTransaction();
      const ids: bigint[] = [];
      for (const row of rows) {
        ids.push(await EventProducer.insert(c, queue, row));
      }
      await c.commit();
      return ids;
    } finally {
      await c.end();
    }
  }

  async function count(queue: string, where: string): Promise<number> {
    return Number(await db.scalar(`SELECT COUNT(*) FROM \`${queue}\` WHERE ${where}`));
  }

  before(async () => {
    if (skip) {
      return;
    }
    db = await TestDatabase.create('receive');
    await db.exec(...Object.values(QUEUES));
    manager = await ManagerProcess.start('node-receive', { database: db, queue: 'abort_q' });
  });

  after(async () => {
    for (const r of receivers) {
      r.abort();
    }
    await manager?.stop();
    await db?.drop();
  });

  it('acks every event once, answered OK', { skip }, async () => {
    const handled = new Map<string, number>();
    const results: AckResultInfo[] = [];
    const r = receiver('plain_q', (e) => {
      const key = `${e.shard}/${e.id}`;
      handled.set(key, (handled.get(key) ?? 0) + 1);
      assert.equal(e.queue, 'plain_q');
      assert.equal(typeof e.getBigInt('order_id'), 'bigint');
    }, { concurrency: 4, maxInFlight: 16 });
    r.on('ackResult', (a) => results.push(a));
    r.start();
    assert.ok(await r.awaitSubscribed(30_000), 'subscribed');
    const ids = await insert('plain_q', Array.from({ length: 60 }, (_, i) => ({ order_id: 1000 + i, kind: 'created' })));
    await eventually('every event is acked', async () => (await count('plain_q', 'state = 2')) === 60);
    await eventually('every ack is answered', () => results.length === 60);
    assert.ok(results.every((a) => a.status === 'OK'), JSON.stringify(results.filter((a) => a.status !== 'OK'), (_, v) => (typeof v === 'bigint' ? v.toString() : v)));
    assert.equal(handled.size, 60);
    assert.ok([...handled.values()].every((n) => n === 1), 'each handled once');
    assert.deepEqual(new Set(results.map((a) => a.id)), new Set(ids));
    const stats = r.stats();
    assert.equal(stats.received, 60);
    assert.equal(stats.acked, 60);
    assert.equal(stats.ackOk, 60);
    assert.equal(stats.streamsConnected, 1);
    await r.stop();
  });

  it('redelivers a nacked event at the next epoch; RetryLater waits its delay', { skip }, async () => {
    const seen: Array<{ n: bigint; epoch: bigint; at: number }> = [];
    const r = receiver('nack_q', (e) => {
      const n = e.getBigInt('n');
      seen.push({ n, epoch: e.epoch, at: Date.now() });
      if (e.epoch === 1n) {
        if (n === 1n) {
          throw new Error('boom');
        }
        throw new RetryLater(1500, 'not yet');
      }
    });
    r.start();
    await insert('nack_q', [{ n: 1 }, { n: 2 }]);
    await eventually('both acked', async () => (await count('nack_q', 'state = 2')) === 2);
    for (const n of [1n, 2n]) {
      const attempts = seen.filter((s) => s.n === n);
      assert.deepEqual(attempts.map((s) => s.epoch), [1n, 2n], `event ${n}'s attempts`);
    }
    const retried = seen.filter((s) => s.n === 2n);
    assert.ok(retried[1].at - retried[0].at >= 1400, `RetryLater(1500) came back after ${retried[1].at - retried[0].at} ms`);
    assert.equal(await db.scalar("SELECT epoch FROM nack_q WHERE n = 1"), '2');
    assert.equal(r.stats().nacked, 2);
    await r.stop();
  });

  it('reports a late ack STALE; the later attempt acks the row', { skip }, async () => {
    const results: AckResultInfo[] = [];
    // Without automatic extension: an extended attempt would stay valid, and its ack too.
    const r = receiver('stale_q', async (e) => {
      if (e.epoch === 1n) {
        await new Promise((res) => setTimeout(res, 2500));
      }
    }, { autoExtend: false });
    r.on('ackResult', (a) => results.push(a));
    r.start();
    await insert('stale_q', [{ n: 1 }]);
    await eventually('a STALE answer', () => results.some((a) => a.status === 'STALE'), 20_000);
    await eventually('the row acked', async () => (await count('stale_q', 'state = 2')) === 1);
    const stale = results.find((a) => a.status === 'STALE') as AckResultInfo;
    assert.equal(stale.epoch, 1n);
    assert.ok(results.some((a) => a.status === 'OK' && a.epoch >= 2n), 'the later attempt was acked');
    assert.equal(r.stats().ackStale, 1);
    await r.stop();
  });

  it('stop() notifies, finishes held handlings, acks them and closes', { skip }, async () => {
    const release: Array<() => void> = [];
    let started = 0;
    const ended: StreamEndedInfo[] = [];
    const r = receiver('stop_q', async () => {
      started++;
      await new Promise<void>((res) => release.push(res));
    }, { concurrency: 3, maxInFlight: 3 });
    r.on('streamEnded', (s) => ended.push(s));
    r.start();
    await insert('stop_q', Array.from({ length: 5 }, (_, i) => ({ n: i })));
    await eventually('three handlings held', () => started === 3);
    const stopping = r.stop();
    setTimeout(() => release.splice(0).forEach((f) => f()), 300);
    await stopping;
    assert.equal(await count('stop_q', 'state = 2'), 3, 'the held events were acked');
    assert.equal(await count('stop_q', 'state = 1'), 0, 'none left fired');
    assert.ok(ended.length >= 1 && ended.every((s) => s.codeName === 'OK' && !s.willRetry), JSON.stringify(ended));
    assert.equal(r.stats().streamsConnected, 0);
    assert.equal(r.stop(), stopping, 'stop() is idempotent');
  });

  it('after abort(), held events come back to another receiver at once', { skip }, async () => {
    let held = 0;
    const first = receiver('abort_q', () => {
      held++;
      return new Promise(() => {});
    }, { concurrency: 4, receiverId: 'abort-1' });
    first.start();
    await insert('abort_q', Array.from({ length: 4 }, (_, i) => ({ n: i })));
    await eventually('four held', () => held === 4);
    first.abort();
    const epochs: bigint[] = [];
    const second = receiver('abort_q', (e) => {
      epochs.push(e.epoch);
    }, { receiverId: 'abort-2' });
    second.start();
    await eventually('all acked by the second', async () => (await count('abort_q', 'state = 2')) === 4, 20_000);
    assert.ok(epochs.every((e) => e === 2n), `redelivered at epoch 2: ${epochs}`);
    await second.stop();
  });
});
