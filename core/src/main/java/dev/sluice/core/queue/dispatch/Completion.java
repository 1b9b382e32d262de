package dev.sluice.core.queue.dispatch;

import dev.sluice.core.queue.context.RetryPolicy;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.Release;

/**
 * A change to a fired event on its way to the database through the {@code AckBatcher}: an ack, or a
 * release back to pending (nack, timeout, broken stream, orphan) or to dead.
 *
 * @param from the outlet to answer, or null when nobody waits for an answer
 * @param reason why a release happens, for logs and metrics
 */
public record Completion(
    Kind kind,
    EventRef ref,
    long retryAtNs,
    boolean dead,
    String deadReason,
    AttachedOutlet from,
    String reason,
    boolean unsent,
    long dueBy,
    boolean snooze) {
  public enum Kind {
    ACK,
    RELEASE
  }

  public static Completion ack(EventRef ref, AttachedOutlet from) {
    return new Completion(Kind.ACK, ref, 0, false, null, from, "ack", false, 0, false);
  }

  /**
   * An attempt that never left the manager, undone: back to pending at once, no attempt spent. See
   * {@link RetryPolicy#released}.
   */
  public static Completion released(EventRef ref, long nowNs, AttachedOutlet from, String reason) {
    return failed(RetryPolicy.released(ref, nowNs), from, reason);
  }

  /**
   * An attempt that reached its outlet and is taken back (a graceful stop): back to pending at
   * once, the attempt spent. See {@link RetryPolicy#takenBack}.
   */
  public static Completion takenBack(EventRef ref, long nowNs, String reason) {
    return failed(RetryPolicy.takenBack(ref, nowNs), null, reason);
  }

  /** A release as the {@link RetryPolicy} decided it ({@link RetryPolicy#afterFailure}). */
  public static Completion failed(Release r, AttachedOutlet from, String reason) {
    return new Completion(
        Kind.RELEASE,
        r.ref(),
        r.retryAtNs(),
        r.dead(),
        r.reason(),
        from,
        reason,
        r.unsent(),
        r.dueBy(),
        r.snooze());
  }

  public Release release() {
    return new Release(ref, retryAtNs, dead, deadReason, unsent, dueBy, snooze);
  }

  /** The epoch the row has once this change applied. */
  long epochAfter() {
    return release().epochAfter();
  }
}
