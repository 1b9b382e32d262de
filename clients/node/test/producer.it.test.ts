/**
 * The producer helper on a real database, and what a manager makes of its rows: options and the
 * caller's transaction, dedup keys, an event group with its completion event, and a handler's
 * transactional ack.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as mysql from 'mysql2/promise';
import {
  EventProducer,
  type GroupOutcome,
  type Handled,
  type ReceivedEvent,
  SluiceReceiver,
  transactionalAck,
} from '../src/index';
import { DB, eventually, integrationSkip, ManagerProcess, queueTableSql, TestDatabase } from './support/cluster';

const DEDUP = '`dedup_key` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL';
const GROUP_KEY = '`group_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL';
const COMPLETES = '`completes_group` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL';

const TABLES = [
  queueTableSql('orders_q', ['`order_id` BIGINT NOT NULL', DEDUP, 'UNIQUE KEY `sluice_dedup` (`dedup_key`)']),
  queueTableSql('invoice_q', ['`customer` BIGINT NOT NULL', GROUP_KEY, 'KEY `sluice_group` (`group_key`)'], 'sluice_queue max_attempts=1'),
  queueTableSql('report_q', ['`run` VARCHAR(32) NOT NULL', COMPLETES]),
  queueTableSql('shipped_q', ['`order_id` BIGINT NOT NULL']),
  'CREATE TABLE shipments (order_id BIGINT PRIMARY KEY)',
];

describe('producing events', { timeout: 300_000 }, async () => {
  const skip = await integrationSkip();
  let db: TestDatabase;
  let manager: ManagerProcess;
  let conn: mysql.Connection;
  const receivers: SluiceReceiver[] = [];

  function receiver(queue: string, handler: (e: ReceivedEvent) => unknown): SluiceReceiver {
    const r = new SluiceReceiver({ targets: manager.target, queue, receiverId: `producer-it-${queue}`, handler });
    receivers.push(r);
    return r;
  }

  before(async () => {
    if (skip) {
      return;
    }
    db = await TestDatabase.create('producer');
    await db.exec(...TABLES);
    conn = await db.connect();
    manager = await ManagerProcess.start('node-producer', { database: db, queue: 'shipped_q' });
  });

  after(async () => {
    receivers.forEach((r) => r.abort());
    await conn?.end();
    await manager?.stop();
    await db?.drop();
  });

  it("inserts in the caller's transaction, with its options", { skip }, async () => {
    await conn.beginTransaction();
    await EventProducer.insert(conn, 'orders_q', { order_id: 1 }, { tenant: 'acme' });
    await conn.rollback();
    assert.equal(await db.scalar('SELECT COUNT(*) FROM orders_q'), '0', 'a rollback leaves no event');

    await conn.beginTransaction();
    const delayed = await EventProducer.insert(conn, 'orders_q', { order_id: 2 }, { delayMs: 60_000, tenant: 'acme', priority: -3 });
    const at = new Date(Date.UTC(2030, 0, 1));
    const scheduled = await EventProducer.insert(conn, 'orders_q', new Map([['order_id', 3n]]), { fireAt: at });
    const chosen = await EventProducer.insert(conn, 'orders_q', { order_id: 4 }, { id: 9007199254740993n });
    await conn.commit();

    const row = async (id: bigint, col: string): Promise<string | null> =>
      db.scalar(`SELECT ${col} FROM orders_q WHERE id = ?`, [id]);
    assert.equal(await row(delayed, 'tenant'), 'acme');
    assert.equal(await row(delayed, 'priority'), '-3');
    const delayNs = BigInt((await row(delayed, 'time_next - time_created')) as string);
    assert.ok(delayNs >= 59_000_000_000n && delayNs <= 61_000_000_000n, `delay of ${delayNs} ns`);
    assert.equal(await row(scheduled, 'time_next'), String(BigInt(at.getTime()) * 1_000_000n));
    assert.equal(chosen, 9007199254740993n);
    assert.equal(await row(chosen, 'order_id'), '4', 'the id beyond a number is exact');
  });

  it('refuses system columns, bad names and bad options before writing', { skip }, async () => {
    await assert.rejects(EventProducer.insert(conn, 'orders_q', { state: 1 }), /'state' is a system column/);
    await assert.rejects(EventProducer.insert(conn, 'orders_q;', { order_id: 1 }), /queue name must be/);
    await assert.rejects(EventProducer.insert(conn, 'orders_q', { 'a b': 1 }), /column name must be/);
    await assert.rejects(EventProducer.insert(conn, 'orders_q', { order_id: 1 }, { priority: 200 }), /priority/);
    await assert.rejects(EventProducer.insert(conn, 'orders_q', { order_id: 1 }, { delayMs: -1 }), /delayMs/);
  });

  it('inserts a dedup key once: the second insert is a duplicate with the first id', { skip }, async () => {
    await conn.beginTransaction();
    const first = await EventProducer.insertUnique(conn, 'orders_q', 'order-10-paid', { order_id: 10 });
    const second = await EventProducer.insertUnique(conn, 'orders_q', 'order-10-paid', { order_id: 10 });
    const other = await EventProducer.insertUnique(conn, 'orders_q', 'order-11-paid', { order_id: 11 });
    await conn.commit();
    assert.equal(first.duplicate, false);
    assert.deepEqual(second, { id: first.id, duplicate: true });
    assert.equal(other.duplicate, false);
    assert.equal(await db.scalar("SELECT COUNT(*) FROM orders_q WHERE dedup_key = 'order-10-paid'"), '1');
    await assert.rejects(EventProducer.insertUnique(conn, 'report_q', 'k', { run: 'x' }), /report_q has no dedup_key column/);
    await assert.rejects(EventProducer.insertUnique(conn, 'orders_q', 'k', { order_id: 1, dedup_key: 'j' }), /dedup_key is 'j' but the key given is 'k'/);
  });

  it("delivers a group's completion event after its children, with their counts", { skip }, async () => {
    await conn.beginTransaction();
    for (const customer of [1, 2, 3]) {
      await EventProducer.insertInGroup(conn, 'invoice_q', 'run-2026-11', { customer });
    }
    await EventProducer.insertGroupCompletion(conn, 'report_q', 'run-2026-11', { run: '2026-11' });
    await conn.commit();
    receiver('invoice_q', (e) => {
      assert.equal(e.getString('group_key'), 'run-2026-11');
      if (e.getBigInt('customer') === 3n) {
        throw new Error('no address'); // max_attempts=1: dead at once
      }
    }).start();
    const outcomes: GroupOutcome[] = [];
    receiver('report_q', (e) => {
      if (e.group !== undefined) {
        outcomes.push(e.group);
      }
    }).start();
    await eventually('the completion event', () => outcomes.length > 0);
    assert.deepEqual(outcomes[0], { key: 'run-2026-11', acked: 2n, dead: 1n, cancelled: 0n });
    await assert.rejects(EventProducer.insertInGroup(conn, 'orders_q', 'g', { order_id: 1 }), /orders_q has no group_key column \(sluice queue create --grouped/);
    await assert.rejects(EventProducer.insertInGroup(conn, 'invoice_q', 'x'.repeat(192), { customer: 1 }), /1 to 191 characters/);
  });

  it("acks in the handler's own transaction: its writes and the ack commit together", { skip }, async () => {
    const pool = mysql.createPool({ ...DB, database: db.name, connectionLimit: 4 });
    const handled: Handled[] = [];
    let answers = 0;
    try {
      const r = receiver('shipped_q', async (e) => {
        const c = await pool.getConnection();
        try {
          await c.beginTransaction();
          await c.query('INSERT INTO shipments (order_id) VALUES (?)', [e.getBigInt('order_id')]);
          assert.equal(await transactionalAck(c, e), true);
          await c.commit();
        } catch (err) {
          await c.rollback();
          throw err;
        } finally {
          c.release();
        }
      });
      r.on('handled', (h) => handled.push(h));
      r.on('ackResult', () => answers++);
      r.start();
      await EventProducer.insert(conn, 'shipped_q', { order_id: 77 });
      await eventually('acked', async () => (await db.scalar('SELECT COUNT(*) FROM shipped_q WHERE state = 2')) === '1');
      assert.equal(await db.scalar('SELECT COUNT(*) FROM shipments WHERE order_id = 77'), '1');
      await eventually('handled', () => handled.length === 1);
      assert.equal(handled[0].outcome, 'committed');
      await r.stop();
      assert.equal(answers, 0, 'a committed ack is a notice: the manager answers nothing');
      assert.equal(await db.scalar('SELECT epoch FROM shipped_q'), '1', 'not delivered again');
    } finally {
      await pool.end();
    }
  });
});
