/** The reconnect backoff: 100 ms doubling to 5 s, jittered within [base/2, base], reset on success. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff, checkKeyRange, RetryLater, Snooze } from '../src/index';

describe('Backoff', () => {
  it('doubles from min to max at the top of its jitter', () => {
    const b = new Backoff(100, 5000, () => 0.9999999);
    const delays = Array.from({ length: 9 }, () => b.nextDelayMs());
    assert.deepEqual(delays, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
  });

  it('never waits less than half its base, nor less than min', () => {
    const b = new Backoff(100, 5000, () => 0);
    const delays = Array.from({ length: 8 }, () => b.nextDelayMs());
    assert.deepEqual(delays, [100, 100, 200, 400, 800, 1600, 2500, 2500]);
  });

  it('spreads delays over the jitter range', () => {
    const b = new Backoff(100, 5000);
    for (let i = 0; i < 6; i++) {
      b.nextDelayMs();
    }
    const seen = new Set(Array.from({ length: 50 }, () => b.nextDelayMs()));
    assert.ok([...seen].every((d) => d >= 2500 && d <= 5000), [...seen].join(','));
    assert.ok(seen.size > 10, 'jittered');
  });

  it('starts over from min after reset', () => {
    const b = new Backoff(100, 5000, () => 0.9999999);
    b.nextDelayMs();
    b.nextDelayMs();
    b.nextDelayMs();
    b.reset();
    assert.equal(b.nextDelayMs(), 100);
  });

  it('refuses bounds that do not make sense', () => {
    assert.throws(() => new Backoff(0, 10), /min must be > 0/);
    assert.throws(() => new Backoff(100, 50), /max must be >= min/);
  });
});

describe('checkKeyRange', () => {
  it('accepts Vitess ranges and every-shard forms', () => {
    assert.equal(checkKeyRange(undefined), '');
    assert.equal(checkKeyRange('-'), '');
    assert.equal(checkKeyRange('-80'), '-80');
    assert.equal(checkKeyRange('80-'), '80-');
    assert.equal(checkKeyRange('40-c0'), '40-c0');
  });

  it('says what is wrong with a bad one', () => {
    assert.throws(() => checkKeyRange('80'), /one '-'/);
    assert.throws(() => checkKeyRange('8-'), /even number of hex digits/);
    assert.throws(() => checkKeyRange('-C0'), /lowercase hex/);
    assert.throws(() => checkKeyRange('80-40'), /start "80" must be below end "40"/);
    assert.throws(() => checkKeyRange('40-4000'), /must be below/);
  });
});

describe('RetryLater', () => {
  it('rounds a sub-millisecond delay up, since 0 means the queue backoff', () => {
    assert.equal(new RetryLater(0.2, 'r').retryAfterMs, 1);
    assert.equal(new RetryLater(0).retryAfterMs, 0);
    assert.equal(new RetryLater(1500, 'rate limited').retryAfterMs, 1500);
    assert.equal(new RetryLater(5, 'why').reason, 'why');
    assert.throws(() => new RetryLater(-1), RangeError);
  });
});

describe('Snooze', () => {
  it('is a RetryLater whose delay must be more than 0', () => {
    const z = new Snooze(250, 'not yet');
    assert.ok(z instanceof RetryLater);
    assert.equal(z.retryAfterMs, 250);
    assert.equal(z.reason, 'not yet');
    assert.equal(z.name, 'Snooze');
    assert.throws(() => new Snooze(0), RangeError);
    assert.throws(() => new Snooze(-5), RangeError);
  });
});
