package dev.sluice.db.store;

/**
 * Returns a fired event to pending at {@code retryAtNs}, or to dead when {@code dead} (its attempts
 * are used up).
 *
 * @param reason why it goes dead (recorded for {@code sluice dead list}); null when not dead or
 *     unknown
 * @param unsent the attempt never left the manager (nobody holds a delivery of it, and no answer to
 *     it can come): the fire is undone, back to pending at the epoch before it, so that it spends
 *     no attempt. Never with {@code dead}.
 * @param dueBy when above 0, an expiry judged at that time: it applies only while the row's {@code
 *     time_next} is still at most {@code dueBy}, so that a receiver's extension written since (a
 *     later {@code time_next}, same epoch) wins over it and the attempt stays fired. 0 for any
 *     other release.
 * @param snooze the handler snoozed the attempt: back to pending at {@code retryAtNs} with the
 *     epoch kept and the row's {@code snoozes} counted up, spending no attempt, while the table has
 *     that column and the event was snoozed fewer than {@code max_snoozes} times; otherwise the
 *     release is the failed attempt {@code dead} and {@code reason} describe. The store judges
 *     {@code dead} again on a table with {@code snoozes}: attempts are {@code epoch - snoozes}.
 */
public record Release(
    EventRef ref,
    long retryAtNs,
    boolean dead,
    String reason,
    boolean unsent,
    long dueBy,
    boolean snooze) {
  public Release {
    if (unsent && dead) {
      throw new IllegalArgumentException("an unsent attempt is never dead: " + ref);
    }
  }

  public Release(EventRef ref, long retryAtNs, boolean dead, String reason, boolean unsent) {
    this(ref, retryAtNs, dead, reason, unsent, 0, false);
  }

  public Release(EventRef ref, long retryAtNs, boolean dead, String reason) {
    this(ref, retryAtNs, dead, reason, false);
  }

  public Release(EventRef ref, long retryAtNs, boolean dead) {
    this(ref, retryAtNs, dead, null, false);
  }

  /** An attempt that never left the manager, undone: see {@code unsent}. */
  public static Release unsent(EventRef ref, long retryAtNs) {
    return new Release(ref, retryAtNs, false, null, true);
  }

  /** This release as the expiry of a deadline judged passed at {@code nowNs}: see {@code dueBy}. */
  public Release expiredAt(long nowNs) {
    return new Release(ref, retryAtNs, dead, reason, unsent, nowNs, snooze);
  }

  /** This failed attempt as a snooze: see {@code snooze}. */
  public Release asSnooze() {
    return new Release(ref, retryAtNs, dead, reason, false, dueBy, true);
  }

  /** The epoch the row has once this release applied. */
  public long epochAfter() {
    return unsent ? ref.epoch() - 1 : ref.epoch();
  }
}
