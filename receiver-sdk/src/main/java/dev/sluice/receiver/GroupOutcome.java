package dev.sluice.receiver;

/**
 * What became of an event group's children, delivered with the group's completion event (README,
 * "Event groups"): counted once, when the group completed. Children purged before the group was
 * sealed are not counted.
 *
 * @param key the group's key
 * @param acked children acked
 * @param dead children dead
 * @param cancelled children cancelled
 */
public record GroupOutcome(String key, long acked, long dead, long cancelled) {

  /** All children counted. */
  public long total() {
    return acked + dead + cancelled;
  }
}
