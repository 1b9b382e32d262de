/**
 * Deadline extension without a manager: the extender matches answers to what it sent, turns a
 * refusal into an ExtensionRefused, fails at once when its stream ends; automatic extension asks
 * at the share of the hold, again after each answer, and stops when refused or stopped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { autoExtend, deadlineOf, Extender, ExtensionRefused } from '../src/extender';
import type { Logger } from '../src/logger';
import { Outbox } from '../src/outbox';
import type { WireEvent, WireExtend } from '../src/proto';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function wire(): WireEvent {
  return {
    id: '7',
    epoch: '2',
    queue: 'q',
    shard: 's1',
    tenant: '',
    priority: 0,
    timeDueNs: '0',
    timeCreatedNs: '0',
    timeFiredNs: '1000000000',
    columns: {},
    deliveryToken: Buffer.alloc(0),
    lastAttempt: false,
    timeDeadlineNs: '3000000000',
  };
}

describe('Extender', () => {
  it('sends on the origin stream and resolves with its answer', async () => {
    const x = new Extender();
    const origin = new Outbox();
    const other = new Outbox();
    const sent: string[] = [];
    const streamA = {};
    const streamB = {};
    x.routes = () => [
      { outbox: other, send: (m: WireExtend) => (sent.push(`other:${m.extendByMs}`), streamB) },
      { outbox: origin, send: (m: WireExtend) => (sent.push(`origin:${m.extendByMs}`), streamA) },
    ];
    const p = x.send(wire(), origin, 2000);
    assert.deepEqual(sent, ['origin:2000']);
    x.answered({
      event: { id: '7', epoch: '2', shard: 's1', deliveryToken: Buffer.alloc(0) },
      status: 'EXTEND_STATUS_OK',
      timeDeadlineNs: '5000000000',
    });
    assert.equal(deadlineOf(wire(), await p).getTime(), 5000);
  });

  it('falls back to another stream, and fails when that stream ends', async () => {
    const x = new Extender();
    const origin = new Outbox();
    const streamB = {};
    x.routes = () => [
      { outbox: origin, send: () => undefined },
      { outbox: new Outbox(), send: () => streamB },
    ];
    const p = x.send(wire(), origin, 1000);
    x.streamEnded(streamB);
    await assert.rejects(p, /went on ended/);
  });

  it('fails at once when no stream is subscribed', async () => {
    const x = new Extender();
    await assert.rejects(x.send(wire(), new Outbox(), 1000), /no manager stream is subscribed/);
  });

  it('turns STALE and LIMIT into ExtensionRefused with the status', () => {
    for (const status of ['STALE', 'UNKNOWN', 'LIMIT']) {
      assert.throws(
        () => deadlineOf(wire(), { status: `EXTEND_STATUS_${status}`, timeDeadlineNs: '0' }),
        (e: unknown) => e instanceof ExtensionRefused && e.status === status,
      );
    }
  });
});

describe('autoExtend', () => {
  it('asks for one more hold at the share of the hold, again after each answer, until stopped', async () => {
    const asked: number[] = [];
    const start = Date.now();
    const stop = autoExtend(
      200,
      0.5,
      start,
      async (by) => {
        asked.push(Date.now() - start);
        assert.equal(by, 200);
        return new Date();
      },
      quiet,
      'e',
    );
    await new Promise((r) => setTimeout(r, 380));
    stop();
    const n = asked.length;
    assert.ok(n >= 2 && n <= 4, `asked ${n} times: ${asked}`);
    assert.ok(asked[0] >= 90, `first ask at ${asked[0]} ms`);
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(asked.length, n, 'nothing asked once stopped');
  });

  it('stops when refused', async () => {
    let asked = 0;
    autoExtend(
      100,
      0.5,
      Date.now(),
      async () => {
        asked++;
        throw new ExtensionRefused('STALE', 'stale');
      },
      quiet,
      'e',
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(asked, 1);
  });
});
