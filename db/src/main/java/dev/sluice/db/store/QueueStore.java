package dev.sluice.db.store;

/**
 * What every port of one queue table has: the table's name and the database server's clock. The
 * ports ({@link DispatchStore}, {@link OrderingStore}, {@link OperatorStore}, {@link
 * MaintenanceStore}) each serve one caller; every state change through any of them is a
 * compare-and-set on (id, state, epoch): callers pass the epoch they believe current and learn per
 * event whether the change applied.
 *
 * <p>Implementations are thread-safe; each call uses its own pooled connection.
 */
public interface QueueStore {

  /** The queue table's name. */
  String queue();

  /** The database server's clock, ns since the epoch. */
  long serverTimeNs();
}
