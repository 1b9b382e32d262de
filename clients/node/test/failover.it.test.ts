/**
 * Two managers on one shard, a receiver given both: the leader dies without notice (SIGKILL). The
 * acks of what the receiver held from it go through the standby, which applies them by the same
 * compare-and-set, so those events are not delivered again; the standby takes the shard over and
 * new events flow, with no restart of the receiver.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SluiceReceiver } from '../src/index';
import { eventually, integrationSkip, ManagerProcess, queueTableSql, TestDatabase } from './support/cluster';

describe('failover between managers', { timeout: 300_000 }, async () => {
  const skip = await integrationSkip();
  let db: TestDatabase;
  let leader: ManagerProcess;
  let standby: ManagerProcess;
  let receiver: SluiceReceiver | undefined;

  before(async () => {
    if (skip) {
      return;
    }
    db = await TestDatabase.create('failover');
    await db.exec(queueTableSql('fo_q', ['`n` INT NOT NULL'], 'sluice_queue min_backoff=0ms'));
    leader = await ManagerProcess.start('node-leader', { database: db, queue: 'fo_q' });
    standby = await ManagerProcess.start('node-standby', { database: db, queue: 'fo_q', ready: 'answering' });
  });

  after(async () => {
    receiver?.abort();
    await leader?.kill();
    await standby?.stop();
    await db?.drop();
  });

  it('the standby takes over; held acks are rerouted, not redelivered', { skip }, async () => {
    const handled: Array<{ n: bigint; epoch: bigint }> = [];
    let holding = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver = new SluiceReceiver({
      targets: [leader.target, standby.target],
      queue: 'fo_q',
      receiverId: 'failover',
      concurrency: 8,
      handler: async (e) => {
        const n = e.getBigInt('n');
        if (n < 100n) {
          holding++;
          await released;
        }
        handled.push({ n, epoch: e.epoch });
      },
    });
    receiver.start();
    await db.exec('INSERT INTO fo_q (n) VALUES (1), (2), (3), (4)');
    await eventually('four held', () => holding === 4);
    await leader.kill();
    release();
    await eventually(
      'the held events acked through the standby',
      async () => (await db.scalar('SELECT COUNT(*) FROM fo_q WHERE n < 100 AND state = 2')) === '4',
      60_000,
    );
    assert.equal(await db.scalar('SELECT MAX(epoch) FROM fo_q'), '1', 'none delivered again');

    await db.exec('INSERT INTO fo_q (n) VALUES (101), (102), (103)');
    await eventually(
      'new events acked under the new leader',
      async () => (await db.scalar('SELECT COUNT(*) FROM fo_q WHERE state = 2')) === '7',
      60_000,
    );
    assert.deepEqual(handled.map((h) => h.epoch), Array(7).fill(1n));
    assert.ok(receiver.stats().reconnects >= 1, 'the stream to the dead leader was retried');
    assert.equal(receiver.stats().streamsConnected, 1);
    await receiver.stop();
  });
});
