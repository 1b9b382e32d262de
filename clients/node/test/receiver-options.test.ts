/**
 * A receiver's options are checked when it is made, naming the bad one; with no manager to reach,
 * it keeps retrying each target on its backoff and still stops at once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SluiceReceiver, type StreamEndedInfo, stderrLogger } from '../src/index';
import { freePort } from './support/cluster';

const ok = { targets: ['127.0.0.1:7470'], queue: 'q', handler: () => undefined };

describe('receiver options', () => {
  it('are checked, naming the first bad one', () => {
    assert.throws(() => new SluiceReceiver({ ...ok, targets: [] }), /targets is required/);
    assert.throws(() => new SluiceReceiver({ ...ok, targets: ['a:1', ' '] }), /targets\[1\] is blank/);
    assert.throws(() => new SluiceReceiver({ ...ok, targets: ['a:1', 'a:1'] }), /lists a:1 twice/);
    assert.throws(() => new SluiceReceiver({ ...ok, queue: '' }), /queue is required/);
    assert.throws(() => new SluiceReceiver({ ...ok, handler: undefined as never }), /handler is required/);
    assert.throws(() => new SluiceReceiver({ ...ok, autoExtendAt: 1 }), /autoExtendAt must be in \(0, 1\)/);
    assert.throws(() => new SluiceReceiver({ ...ok, autoExtend: 'yes' as never }), /autoExtend must be a boolean/);
    assert.throws(() => new SluiceReceiver({ ...ok, receiverId: ' ' }), /receiverId must not be blank/);
    assert.throws(() => new SluiceReceiver({ ...ok, concurrency: 0 }), /concurrency must be an integer >= 1/);
    assert.throws(() => new SluiceReceiver({ ...ok, maxInFlight: 1.5 }), /maxInFlight must be an integer >= 1/);
    assert.throws(() => new SluiceReceiver({ ...ok, keyRange: '80' }), /keyRange must be/);
    assert.throws(() => new SluiceReceiver({ ...ok, reconnectBackoff: { minMs: 10, maxMs: 5 } }), /max must be >= min/);
    assert.throws(() => new SluiceReceiver({ ...ok, shutdownTimeoutMs: -1 }), /shutdownTimeoutMs/);
    assert.throws(() => new SluiceReceiver({ ...ok, token: ' ' }), /token must not be blank/);
    assert.throws(() => new SluiceReceiver({ ...ok, tls: { caFile: 'ca.pem', certFile: 'c.pem' } }), /go together/);
  });

  it('default the credits to the concurrency and the id to host-pid-random', () => {
    const r = new SluiceReceiver({ ...ok, concurrency: 3 });
    assert.equal(r.maxInFlight, 3);
    assert.match(r.receiverId, /^.+-\d+-[0-9a-f]{6}$/);
    assert.equal(new SluiceReceiver({ ...ok, targets: '127.0.0.1:1' }).queue, 'q');
  });
});

describe('a receiver with no manager to reach', () => {
  it('retries every target on its own backoff, and stops at once', async () => {
    const targets = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`];
    const ended: StreamEndedInfo[] = [];
    const r = new SluiceReceiver({
      targets,
      queue: 'q',
      handler: () => undefined,
      reconnectBackoff: { minMs: 20, maxMs: 100 },
      logger: stderrLogger('error'),
    });
    r.on('streamEnded', (s) => ended.push(s));
    r.start();
    assert.equal(await r.awaitSubscribed(300), false);
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (targets.every((t) => ended.filter((s) => s.endpoint === t).length >= 3)) {
          r.off('streamEnded', check);
          resolve();
        }
      };
      r.on('streamEnded', check);
      check();
    });
    assert.ok(ended.every((s) => s.codeName === 'UNAVAILABLE' && s.willRetry), JSON.stringify(ended));
    assert.ok(r.stats().reconnects >= 4);
    const began = Date.now();
    await r.stop();
    assert.ok(Date.now() - began < 6000, `stop took ${Date.now() - began} ms`);
    assert.equal(r.stats().streamsConnected, 0);
    assert.throws(() => r.start(), /already stopped/);
  });
});
