package dev.sluice.client;

/**
 * What {@link EventProducer#insertDebounced} did to the event of a {@code dedup_key}.
 *
 * @param id the event's id on the shard the statements ran on: the new one, or the existing one
 * @param result inserted, replaced, or left alone because it is no longer pending
 */
public record DebounceOutcome(long id, Result result) {

  /** What happened to the event of the key. */
  public enum Result {
    /** No row held the key: a new event was inserted. */
    INSERTED,
    /**
     * The row holding the key was pending: its columns and due time were replaced (same id, same
     * epoch), as a compare-and-set on its id, epoch and pending state.
     */
    REPLACED,
    /**
     * The row holding the key is fired, acked, dead or cancelled: nothing was written, as with
     * {@link EventProducer#insertUnique} on a duplicate. The key stays taken while the row exists.
     */
    NOT_PENDING
  }

  /** True when this call wrote nothing. */
  public boolean unchanged() {
    return result == Result.NOT_PENDING;
  }
}
