package dev.sluice.db.store;

/**
 * Returns a fired event to pending at {@code retryAtNs}, or to dead when {@code dead} (its attempts
 * are used up).
 *
 * @param reason why it goes dead (recorded for {@code sluice dead list}); null when not dead or
 *     unknown
 */
public record Release(EventRef ref, long retryAtNs, boolean dead, String reason) {
  public Release(EventRef ref, long retryAtNs, boolean dead) {
    this(ref, retryAtNs, dead, null);
  }
}
