package dev.sluice.client;

/**
 * The text of the ack's compare-and-set, shared by the manager (its ack writer, in sluice-db) and
 * the receiver SDK's transactional ack, so that the two write the same thing: {@code fired → acked}
 * guarded by the id, the state and the delivered epoch, with {@code time_acked} and {@code
 * time_next} set to now ({@code time_next} too, so that the purge can use the {@code (state,
 * time_next)} index).
 *
 * <p>The values are given as SQL text: {@code ?} where the caller binds a parameter (the manager
 * binds the state and its clock's now), or a literal or expression (the SDK writes the state codes
 * and {@link QueueColumns#NOW_NS_SQL}).
 */
public final class AckSql {
  private AckSql() {}

  /** The {@code SET} list of an ack: state to {@code acked}, both times to {@code now}. */
  public static String set(String acked, String now) {
    return "`"
        + QueueColumns.STATE
        + "` = "
        + acked
        + ", `"
        + QueueColumns.TIME_ACKED
        + "` = "
        + now
        + ", `"
        + QueueColumns.TIME_NEXT
        + "` = "
        + now;
  }

  /**
   * The guard of every compare-and-set on events (an ack's among them): the row is one of {@code
   * ids} ids ({@code ?} each, then bound), in state {@code state}, at the epoch bound after them.
   */
  public static String guard(int ids, String state) {
    return "`"
        + QueueColumns.ID
        + "` in (?"
        + ",?".repeat(ids - 1)
        + ") and `"
        + QueueColumns.STATE
        + "` = "
        + state
        + " and `"
        + QueueColumns.EPOCH
        + "` = ?";
  }
}
