package dev.sluice.db.store;

import dev.sluice.db.QueueTable;
import javax.sql.DataSource;

/**
 * Builds every store of one shard: the ports of its queue tables, its event groups, its recurring
 * events and its lease. The queue engine holds this factory, never an implementation: {@link #over}
 * gives the JDBC one.
 *
 * <p>An unfenced store is for writes that are not a shard leader's (operators' commands, acks at a
 * manager that no longer leads, tools); a leader's store conditions its own writes on the term's
 * {@link Fence}.
 */
public interface Stores {

  /** The JDBC stores of the shard behind {@code dataSource}. */
  static Stores over(DataSource dataSource) {
    return new JdbcStores(dataSource);
  }

  /** Every port of {@code table}, unfenced. */
  EventStore events(QueueTable table);

  /** Every port of {@code table}, its leader's own writes conditioned on {@code fence}. */
  EventStore events(QueueTable table, Fence fence);

  /** The shard's event groups, unfenced (operators' reads). */
  GroupStore groups();

  /** The shard's event groups, the leader's writes conditioned on {@code fence}. */
  GroupStore groups(Fence fence);

  /** The shard's recurring events, unfenced (operators' commands). */
  ScheduleStore schedules();

  /** The shard's recurring events, the leader's writes conditioned on {@code fence}. */
  ScheduleStore schedules(Fence fence);

  /** The shard's lease and the managers' heartbeats. */
  LeaseStore leases();
}
