/** The conformance process's canonical column form (conformance/CONTRACT.md). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonical } from '../conformance/canonical';
import { Timestamp } from '../src/index';

describe('canonical column form', () => {
  it('writes each kind as the contract says', () => {
    assert.deepEqual(canonical({ kind: 'int', value: -9223372036854775808n }), { kind: 'int', value: '-9223372036854775808' });
    assert.deepEqual(canonical({ kind: 'uint', value: 18446744073709551615n }), { kind: 'uint', value: '18446744073709551615' });
    assert.deepEqual(canonical({ kind: 'double', value: 0.1 }), { kind: 'double', value: 0.1 });
    assert.deepEqual(canonical({ kind: 'double', value: -0 }), { kind: 'double', value: '-0' });
    assert.deepEqual(canonical({ kind: 'decimal', value: '12.50' }), { kind: 'decimal', value: '12.50' });
    assert.deepEqual(canonical({ kind: 'bytes', value: Buffer.from([0x00, 0x01, 0xfe, 0xff]) }), { kind: 'bytes', value: 'AAH+/w==' });
    assert.deepEqual(canonical({ kind: 'timestamp', value: new Timestamp(1700000000n, 654_321_000) }), { kind: 'timestamp', value: '1700000000654321' });
    assert.deepEqual(canonical({ kind: 'time', value: -3020399000000n }), { kind: 'time', value: '-3020399000000' });
    assert.deepEqual(canonical({ kind: 'bool', value: false }), { kind: 'bool', value: false });
    assert.deepEqual(canonical({ kind: 'null', value: null }), { kind: 'null', value: null });
    assert.deepEqual(canonical({ kind: 'datetime', value: '2024-03-31T02:30:00.123456' }), { kind: 'datetime', value: '2024-03-31T02:30:00.123456' });
    assert.equal(JSON.parse(JSON.stringify(canonical({ kind: 'double', value: 0.1 }))).value, 0.1);
  });
});
