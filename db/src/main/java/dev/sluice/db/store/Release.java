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
 */
public record Release(
    EventRef ref, long retryAtNs, boolean dead, String reason, boolean unsent, long dueBy) {
  public Release {
    if (unsent && dead) {
      throw new IllegalArgumentException("an unsent attempt is never dead: " + ref);
    }
  }

  public Release(EventRef ref, long retryAtNs, boolean dead, String reason, boolean unsent) {
    this(ref, retryAtNs, dead, reason, unsent, 0);
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
    return new Release(ref, retryAtNs, dead, reason, unsent, nowNs);
  }

  /** The epoch the row has once this release applied. */
  public long epochAfter() {
    return unsent ? ref.epoch() - 1 : ref.epoch();
  }
}
