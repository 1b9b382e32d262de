/** Wire values to JavaScript values without loss, through the real proto encoding. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Timestamp } from '../src/index';
import { sluiceStub, type ManagerMessage, type WireValue } from '../src/proto';
import { fromWire } from '../src/values';

/** Encodes values as a manager would send them and decodes them as the client reads them. */
function throughTheWire(values: Record<string, WireValue>): Record<string, WireValue> {
  const method = (sluiceStub() as unknown as { service: Record<string, { responseSerialize(m: ManagerMessage): Buffer; responseDeserialize(b: Buffer): ManagerMessage }> }).service.Subscribe;
  const bytes = method.responseSerialize({ events: { events: [{ columns: values } as never] } });
  return (method.responseDeserialize(bytes).events?.events[0].columns ?? {}) as Record<string, WireValue>;
}

describe('column values', () => {
  it('keep 64-bit integers exact as bigint, signed and unsigned', () => {
    const got = throughTheWire({
      min: { intValue: '-9223372036854775808' },
      max: { intValue: '9223372036854775807' },
      umax: { uintValue: '18446744073709551615' },
      unsafe: { intValue: '9007199254740993' },
    });
    assert.deepEqual(fromWire(got.min), { kind: 'int', value: -9223372036854775808n });
    assert.deepEqual(fromWire(got.max), { kind: 'int', value: 9223372036854775807n });
    assert.deepEqual(fromWire(got.umax), { kind: 'uint', value: 18446744073709551615n });
    assert.deepEqual(fromWire(got.unsafe), { kind: 'int', value: 9007199254740993n });
  });

  it('keep DECIMAL, DATE, DATETIME and JSON as their exact text', () => {
    const got = throughTheWire({
      d: { decimalValue: '12345678901234567890.0123456789' },
      n: { decimalValue: '-0.50' },
      date: { dateValue: '2024-02-29' },
      dt: { datetimeValue: '2024-03-31T02:30:00.123456' },
      j: { jsonValue: '{"a": 1, "b": [true, null]}' },
      s: { stringValue: 'h\u00e9llo \u2603 \ud83d\ude00' },
    });
    assert.deepEqual(fromWire(got.d), { kind: 'decimal', value: '12345678901234567890.0123456789' });
    assert.deepEqual(fromWire(got.n), { kind: 'decimal', value: '-0.50' });
    assert.deepEqual(fromWire(got.date), { kind: 'date', value: '2024-02-29' });
    assert.deepEqual(fromWire(got.dt), { kind: 'datetime', value: '2024-03-31T02:30:00.123456' });
    assert.deepEqual(fromWire(got.j), { kind: 'json', value: '{"a": 1, "b": [true, null]}' });
    assert.deepEqual(fromWire(got.s), { kind: 'string', value: 'h\u00e9llo \u2603 \ud83d\ude00' });
  });

  it('keep a TIMESTAMP to the microsecond, whatever the zone', () => {
    const got = throughTheWire({ t: { timestampValue: { seconds: '1700000000', nanos: 654_321_000 } } });
    const v = fromWire(got.t);
    assert.equal(v.kind, 'timestamp');
    const t = v.value as Timestamp;
    assert.equal(t.seconds, 1700000000n);
    assert.equal(t.nanos, 654_321_000);
    assert.equal(t.epochMicros(), 1700000000654321n);
    assert.equal(t.toISOString(), '2023-11-14T22:13:20.654321Z');
    assert.equal(t.toDate().getTime(), 1700000000654);
  });

  it('give a TIME as signed microseconds', () => {
    const got = throughTheWire({
      min: { timeValue: { seconds: '-3020399', nanos: 0 } },
      neg: { timeValue: { seconds: '-1', nanos: -500_000_000 } },
      long: { timeValue: { seconds: '90000', nanos: 500_000_000 } },
    });
    assert.deepEqual(fromWire(got.min), { kind: 'time', value: -3020399000000n });
    assert.deepEqual(fromWire(got.neg), { kind: 'time', value: -1500000n });
    assert.deepEqual(fromWire(got.long), { kind: 'time', value: 90000500000n });
    assert.throws(() => fromWire({ kind: 'timeValue', timeValue: { seconds: '1', nanos: 1 } }), /finer than a microsecond/);
  });

  it('give bytes as a Buffer, BIT(1) as a boolean, doubles as numbers, NULL as null', () => {
    const got = throughTheWire({
      b: { bytesValue: Buffer.from([0x00, 0xff, 0x10]) },
      empty: { bytesValue: Buffer.alloc(0) },
      bit: { boolValue: true },
      f: { doubleValue: Math.fround(1.1) },
      z: { nullValue: true },
    });
    const b = fromWire(got.b);
    assert.equal(b.kind, 'bytes');
    assert.ok(Buffer.isBuffer(b.value));
    assert.deepEqual([...(b.value as Buffer)], [0x00, 0xff, 0x10]);
    assert.equal((fromWire(got.empty).value as Buffer).length, 0);
    assert.deepEqual(fromWire(got.bit), { kind: 'bool', value: true });
    assert.deepEqual(fromWire(got.f), { kind: 'double', value: Math.fround(1.1) });
    assert.deepEqual(fromWire(got.z), { kind: 'null', value: null });
  });

  it('read a kind newer than the client as null, as the Java SDK does', () => {
    assert.deepEqual(fromWire({}), { kind: 'null', value: null });
  });
});

describe('Timestamp', () => {
  it('converts from and to microseconds, before the epoch too', () => {
    const t = Timestamp.fromMicros(-1n);
    assert.equal(t.seconds, -1n);
    assert.equal(t.nanos, 999_999_000);
    assert.equal(t.epochMicros(), -1n);
    assert.equal(t.epochNanos(), -1000n);
    assert.equal(t.toISOString(), '1969-12-31T23:59:59.999999Z');
    assert.ok(Timestamp.fromMicros(1700000000654321n).equals(new Timestamp(1700000000n, 654_321_000)));
  });

  it('refuses nanos out of range', () => {
    assert.throws(() => new Timestamp(0n, 1_000_000_000), RangeError);
    assert.throws(() => new Timestamp(0n, -1), RangeError);
  });
});
