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
 */
public record Release(EventRef ref, long retryAtNs, boolean dead, String reason, boolean unsent) {
  public Release {
    if (unsent && dead) {
      throw new IllegalArgumentException("an unsent attempt is never dead: " + ref);
    }
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

  /** The epoch the row has once this release applied. */
  public long epochAfter() {
    return unsent ? ref.epoch() - 1 : ref.epoch();
  }
}
