/**
 * Every MySQL/MariaDB column type through a real table, a real manager and this client: each value
 * arrives exactly as the README's mapping says (extremes, fractions, time zones), NULL as null.
 * The producer's session writes in +05:30, so a value that passed through a zone would show.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ReceivedEvent, SluiceReceiver, Timestamp } from '../src/index';
import { eventually, integrationSkip, ManagerProcess, TestDatabase } from './support/cluster';
import { insertTypedRows, TYPED_COLUMNS, typedTableSql } from './support/typed-columns';

describe('typed columns', { timeout: 300_000 }, async () => {
  const skip = await integrationSkip();
  let db: TestDatabase;
  let manager: ManagerProcess;
  let receiver: SluiceReceiver | undefined;

  before(async () => {
    if (skip) {
      return;
    }
    db = await TestDatabase.create('typed');
    await db.exec(typedTableSql('typed_q'), "ALTER TABLE typed_q ADD COLUMN c_json JSON NULL");
    await insertTypedRows(db, 'typed_q');
    await db.exec(`UPDATE typed_q SET c_json = '{"a": 1, "b": [true, null]}' WHERE id = 1`);
    manager = await ManagerProcess.start('node-typed', { database: db, queue: 'typed_q' });
  });

  after(async () => {
    receiver?.abort();
    await manager?.stop();
    await db?.drop();
  });

  it('arrive exactly, each as its kind', { skip }, async () => {
    const got = new Map<bigint, ReceivedEvent>();
    receiver = new SluiceReceiver({ targets: manager.target, queue: 'typed_q', receiverId: 'typed', handler: (e) => void got.set(e.id, e) });
    receiver.start();
    await eventually('both rows acked', async () => (await db.scalar('SELECT COUNT(*) FROM typed_q WHERE state = 2')) === '2');

    const e = got.get(1n) as ReceivedEvent;
    for (const [name, , , kind, value] of TYPED_COLUMNS) {
      const c = e.column(name);
      assert.equal(c.kind, kind, `${name}'s kind`);
      if (value instanceof Timestamp) {
        assert.ok((c.value as Timestamp).equals(value), `${name}: ${c.value} is not ${value}`);
      } else {
        assert.deepEqual(c.value, value, `${name}'s value`);
      }
    }
    // MariaDB's JSON is LONGTEXT with a check: a string; MySQL's JSON type: json. Either way, text.
    assert.ok(['json', 'string'].includes(e.kind('c_json')));
    assert.equal(e.getJson('c_json'), '{"a": 1, "b": [true, null]}');
    assert.equal(e.getBoolean('c_bool'), true);
    assert.equal(e.getNumber('c_int'), 4294967295);
    assert.throws(() => e.getNumber('c_bigint'), /not a number/);
    assert.equal(e.getTimestamp('c_timestamp').epochMicros(), 1700000000654321n);
    assert.equal(e.columnNames().length, TYPED_COLUMNS.length + 1);

    const n = got.get(2n) as ReceivedEvent;
    for (const name of n.columnNames()) {
      assert.equal(n.isNull(name), true, `${name} is NULL`);
      assert.equal(n.columns[name], null);
    }
  });
});
