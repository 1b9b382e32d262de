package dev.sluice.core.queue.context;

import dev.sluice.core.loop.Backoff;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.Release;

/**
 * What becomes of an event whose attempt failed — a nack, an ack timeout, a publish the broker
 * refused, an orphan found in the table — on every path: the dispatcher's, and the direct writes of
 * a manager that no longer leads the shard. Back to pending after the queue's exponential backoff
 * (or the retry-after the outlet asked for), or dead when the attempt was its last, with the reason
 * kept for {@code sluice dead list}. An attempt that did not fail goes back to pending at once: one
 * that never left the manager spends no attempt ({@link #released}), one that reached its outlet
 * does ({@link #takenBack}).
 *
 * <p>Attempts are counted by the epoch: each fire adds one, and an attempt spent is an epoch that
 * stays. An attempt that never left the manager (fired, then not sent; given back by its outlet
 * unsent) is undone, fired at e + 1 back to pending at e: no delivery of e + 1 exists, so no late
 * answer can apply to the next fire of e + 1. One that reached an outlet keeps its epoch, so that
 * an answer to it is stale once the event is fired again; it counts, whatever ended it.
 *
 * <p>Immutable; a table altered in place gets a new one.
 */
public final class RetryPolicy {
  private final Backoff backoff;
  private final int maxAttempts;

  public RetryPolicy(Backoff backoff, int maxAttempts) {
    this.backoff = backoff;
    this.maxAttempts = maxAttempts;
  }

  public static RetryPolicy of(QueueOptions o) {
    return new RetryPolicy(new Backoff(o.minBackoff(), o.maxBackoff()), o.maxAttempts());
  }

  /**
   * The release of the failed attempt {@code ref.epoch()}, at {@code nowNs}.
   *
   * @param retryAfterNs the outlet's wish (0: none): honoured up to a day or max_backoff
   * @param reason why the attempt failed ("nack: ...", "ack timeout"), for logs and the dead reason
   */
  public Release afterFailure(EventRef ref, long nowNs, long retryAfterNs, String reason) {
    boolean dead = isLastAttempt(ref.epoch());
    long asked = backoff.retryAfterNs(retryAfterNs);
    long delay = asked > 0 ? asked : backoff.delayNs(ref.epoch());
    return new Release(ref, Backoff.at(nowNs, delay), dead, dead ? deadReason(reason) : null);
  }

  /**
   * A handler's snooze of attempt {@code ref}: back to pending at {@code nowNs + delayNs} without
   * spending an attempt where the table counts snoozes (see {@link Release#snooze}); where it does
   * not, or past max_snoozes, the store applies it as this failed attempt instead.
   */
  public Release snoozed(EventRef ref, long nowNs, long delayNs, String reason) {
    return afterFailure(ref, nowNs, Math.max(1, delayNs), reason).asSnooze();
  }

  /**
   * The release of an attempt that never left the manager — fired but not sent, or given back by
   * its outlet unsent (a broker that is down): pending again at {@code nowNs} at the epoch before
   * the fire, so that no attempt is spent.
   */
  public static Release released(EventRef ref, long nowNs) {
    return Release.unsent(ref, nowNs);
  }

  /**
   * The release of an attempt that reached its outlet and did not fail — still held by a receiver
   * at a graceful stop: pending again at {@code nowNs}, without backoff and never dead by this, but
   * the attempt counts (its epoch stays: the receiver may still answer it, and that answer must be
   * stale).
   */
  public static Release takenBack(EventRef ref, long nowNs) {
    return new Release(ref, nowNs, false, null);
  }

  /**
   * Whether attempt {@code epoch} used up the event's attempts. Epochs never go back past an
   * attempt that was sent (so a stale ack can never match a later attempt); an operator's replay of
   * a dead event therefore keeps its epoch, and each life of an event is {@code max_attempts}
   * attempts long: it dies at every multiple.
   */
  public boolean isLastAttempt(long epoch) {
    return isLastAttempt(epoch, maxAttempts);
  }

  static boolean isLastAttempt(long epoch, int maxAttempts) {
    return QueueOptions.isLastAttempt(epoch, maxAttempts);
  }

  /** What {@code sluice dead list} shows for an event whose attempts are used up. */
  public String deadReason(String reason) {
    return "max_attempts "
        + maxAttempts
        + " reached"
        + (reason == null || reason.isEmpty() ? "" : "; last attempt: " + reason);
  }

  public Backoff backoff() {
    return backoff;
  }

  public int maxAttempts() {
    return maxAttempts;
  }
}
