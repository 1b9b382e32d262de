/**
 * The conformance receiver process (conformance/CONTRACT.md) against a real manager, as the
 * conformance suite drives it: its lines, its modes, a graceful stop, a kill, and typed columns in
 * the canonical form.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { canonical } from '../conformance/canonical';
import type { ColumnKind, ColumnJsValue } from '../src/index';
import { eventually, integrationSkip, ManagerProcess, queueTableSql, TestDatabase } from './support/cluster';
import { ReceiverProcess } from './support/receiver-process';
import { insertTypedRows, TYPED_COLUMNS, typedTableSql } from './support/typed-columns';

const QUEUES = ['ack_q', 'nack_q', 'hold_q', 'kill_q'];

describe('the conformance receiver process', { timeout: 300_000 }, async () => {
  const skip = await integrationSkip();
  let db: TestDatabase;
  let manager: ManagerProcess;
  const processes: ReceiverProcess[] = [];

  function start(queue: string, mode: string, receiverId = `conf-${queue}`): ReceiverProcess {
    const p = new ReceiverProcess({
      SLUICE_TARGETS: manager.target,
      SLUICE_QUEUE: queue,
      SLUICE_RECEIVER_ID: receiverId,
      SLUICE_MAX_IN_FLIGHT: '4',
      SLUICE_MODE: mode,
    });
    processes.push(p);
    return p;
  }

  async function insert(queue: string, n: number): Promise<void> {
    const rows = Array.from({ length: n }, (_, i) => `(${i})`).join(', ');
    await db.exec(`INSERT INTO \`${queue}\` (n) VALUES ${rows}`);
  }

  async function count(queue: string, where: string): Promise<number> {
    return Number(await db.scalar(`SELECT COUNT(*) FROM \`${queue}\` WHERE ${where}`));
  }

  async function stopped(p: ReceiverProcess): Promise<void> {
    const began = Date.now();
    p.stop();
    const code = await p.exited;
    assert.equal(code, 0, `exit code; stderr:\n${p.log()}`);
    assert.ok(Date.now() - began < 10_000, 'stopped within 10 s');
    assert.equal(p.lines.at(-1)?.type, 'stopped', 'stopped is the last line');
    assert.deepEqual(p.garbage, [], 'stdout holds JSON lines only');
  }

  before(async () => {
    if (skip) {
      return;
    }
    db = await TestDatabase.create('conformance');
    await db.exec(
      ...QUEUES.map((q) => queueTableSql(q, ['`n` INT NOT NULL'], 'sluice_queue min_backoff=0ms')),
      typedTableSql('typed_q'),
    );
    await insertTypedRows(db, 'typed_q');
    manager = await ManagerProcess.start('node-conformance', { database: db, queue: 'typed_q' });
  });

  after(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await manager?.stop();
    await db?.drop();
  });

  it('ack: says ready, handles every event once, stops on "stop"', { skip }, async () => {
    const p = start('ack_q', 'ack');
    await eventually(`ready (stderr:\n${p.log()})`, () => p.of('ready').length === 1, 60_000);
    await insert('ack_q', 30);
    await eventually('all acked', async () => (await count('ack_q', 'state = 2')) === 30);
    await eventually('all handled', () => p.of('handled').length === 30);
    const received = p.of('received');
    assert.equal(new Set(received.map((l) => `${l.shard}/${l.id}`)).size, 30);
    for (const l of received) {
      assert.equal(typeof l.id, 'string');
      assert.equal(l.epoch, '1');
      assert.equal(l.last_attempt, false);
      assert.deepEqual(Object.keys(l.columns as object), ['n']);
      assert.equal((l.columns as Record<string, { kind: string }>).n.kind, 'int');
    }
    assert.ok(p.of('handled').every((l) => l.outcome === 'ack'));
    await stopped(p);
  });

  it('nack-first: each id at epoch n, nacked, then at n+1, acked', { skip }, async () => {
    const p = start('nack_q', 'nack-first');
    await eventually('ready', () => p.of('ready').length === 1, 60_000);
    await insert('nack_q', 5);
    await eventually('all acked', async () => (await count('nack_q', 'state = 2')) === 5);
    await eventually('all handled twice', () => p.of('handled').length === 10);
    const byId = new Map<string, string[]>();
    for (const l of p.of('handled')) {
      byId.set(l.id as string, [...(byId.get(l.id as string) ?? []), `${l.epoch}:${l.outcome}`]);
    }
    assert.deepEqual([...byId.values()], Array(5).fill(['1:nack', '2:ack']));
    await stopped(p);
  });

  it('hold: a graceful stop acks what it holds and leaves none fired', { skip }, async () => {
    const p = start('hold_q', 'hold');
    await eventually('ready', () => p.of('ready').length === 1, 60_000);
    await insert('hold_q', 3);
    await eventually('three held', () => p.of('received').length === 3);
    assert.equal(p.of('handled').length, 0);
    await stopped(p);
    assert.equal(p.of('handled').length, 3);
    assert.equal(await count('hold_q', 'state = 2'), 3);
    assert.equal(await count('hold_q', 'state = 1'), 0);
  });

  it('killed mid-handler: a new process gets every event, none lost', { skip }, async () => {
    const first = start('kill_q', 'hold', 'conf-kill');
    await eventually('ready', () => first.of('ready').length === 1, 60_000);
    await insert('kill_q', 6);
    await eventually('four held', () => first.of('received').length === 4);
    await first.kill();
    const second = start('kill_q', 'ack', 'conf-kill');
    await eventually('all acked', async () => (await count('kill_q', 'state = 2')) === 6, 60_000);
    await stopped(second);
  });

  it('typed columns: every kind and value in the canonical form', { skip }, async () => {
    const p = start('typed_q', 'ack');
    await eventually('both rows handled', () => p.of('handled').length === 2, 60_000);
    const row = p.of('received').find((l) => l.id === '1') as unknown as { columns: Record<string, unknown> };
    for (const [name, , , kind, value] of TYPED_COLUMNS) {
      const expected = canonical({ kind: kind as ColumnKind, value: value as ColumnJsValue });
      assert.deepEqual(row.columns[name], expected, name);
    }
    assert.equal((row.columns.c_timestamp as { value: string }).value, '1700000000654321');
    assert.equal((row.columns.c_ubigint as { value: string }).value, '18446744073709551615');
    const nulls = p.of('received').find((l) => l.id === '2') as unknown as { columns: Record<string, unknown> };
    assert.ok(Object.values(nulls.columns).every((c) => (c as { kind: string }).kind === 'null'));
    await stopped(p);
  });
});
