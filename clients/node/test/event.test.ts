/** ReceivedEvent's fields and typed getters: exact conversions or a clear refusal. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReceivedEvent } from '../src/index';
import type { WireEvent, WireValue } from '../src/proto';

function event(columns: Record<string, WireValue>, extra: Partial<WireEvent> = {}): ReceivedEvent {
  return new ReceivedEvent({
    id: '9223372036854775807',
    epoch: '3',
    queue: 'orders',
    shard: 's1',
    tenant: 'acme',
    priority: -5,
    timeDueNs: '1700000000000000001',
    timeCreatedNs: '1700000000000000000',
    timeFiredNs: '1700000000000000002',
    columns,
    deliveryToken: Buffer.from('tok'),
    lastAttempt: true,
    ...extra,
  });
}

describe('ReceivedEvent', () => {
  it('keeps ids, epochs and times as bigint', () => {
    const e = event({});
    assert.equal(e.id, 9223372036854775807n);
    assert.equal(e.epoch, 3n);
    assert.equal(e.attempt, 3n);
    assert.equal(e.dueTimeNs, 1700000000000000001n);
    assert.equal(e.firedTimeNs, 1700000000000000002n);
    assert.equal(e.priority, -5);
    assert.equal(e.lastAttempt, true);
    assert.equal(e.orderingKey, undefined);
    assert.equal(e.group, undefined);
    assert.equal(e.describe(), 'event 9223372036854775807 of queue orders (shard s1)');
  });

  it('carries the ordering key and a group outcome when set', () => {
    const e = event({}, { orderingKey: '', group: { key: 'run-1', acked: '3', dead: '1', cancelled: '0' } });
    assert.equal(e.orderingKey, '');
    assert.deepEqual(e.group, { key: 'run-1', acked: 3n, dead: 1n, cancelled: 0n });
  });

  it('lists columns sorted, with their kinds', () => {
    const e = event({ b: { kind: 'intValue', intValue: '2' }, a: { kind: 'jsonValue', jsonValue: '{}' } });
    assert.deepEqual(e.columnNames(), ['a', 'b']);
    assert.deepEqual(Object.keys(e.columns), ['a', 'b']);
    assert.equal(e.kind('a'), 'json');
    assert.equal(e.columns.b, 2n);
    assert.throws(() => e.column('c'), /event 9223372036854775807 of queue orders \(shard s1\) has no column 'c' \(columns: a, b\)/);
  });

  it('converts only when exact', () => {
    const e = event({
      big: { kind: 'uintValue', uintValue: '18446744073709551615' },
      small: { kind: 'intValue', intValue: '42' },
      odd: { kind: 'intValue', intValue: '5' },
      one: { kind: 'intValue', intValue: '1' },
      dec: { kind: 'decimalValue', decimalValue: '12.50' },
      dbl: { kind: 'doubleValue', doubleValue: 0.1 },
      dt: { kind: 'datetimeValue', datetimeValue: '2024-03-31T02:30:00' },
      nul: { kind: 'nullValue', nullValue: true },
    });
    assert.equal(e.getBigInt('big'), 18446744073709551615n);
    assert.throws(() => e.getNumber('big'), /column 'big' .* is uint, not a number/);
    assert.equal(e.getNumber('small'), 42);
    assert.equal(e.getNumber('dbl'), 0.1);
    assert.equal(e.getDecimal('dec'), '12.50');
    assert.equal(e.getDecimal('small'), '42');
    assert.throws(() => e.getBigInt('dec'), /is decimal, not an integer/);
    assert.equal(e.getBoolean('one'), true);
    assert.throws(() => e.getBoolean('odd'), /column 'odd'/);
    assert.throws(() => e.getTimestamp('dt'), /is datetime, not a TIMESTAMP/);
    assert.equal(e.getDateTime('dt'), '2024-03-31T02:30:00');
    assert.equal(e.isNull('nul'), true);
    assert.throws(() => e.getString('nul'), /is null, not a string/);
  });

  it('names the column when a value cannot be read', () => {
    assert.throws(
      () => event({ t: { kind: 'timeValue', timeValue: { seconds: '0', nanos: 1 } } }),
      /column 't' of event .*finer than a microsecond/,
    );
  });
});
