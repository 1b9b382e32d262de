package dev.sluice.db.store;

import dev.sluice.db.QueueTable;
import javax.sql.DataSource;

/** The JDBC {@link Stores} of one shard, over its pooled DataSource. */
public final class JdbcStores implements Stores {
  private final DataSource dataSource;

  public JdbcStores(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  @Override
  public EventStore events(QueueTable table) {
    return new JdbcEventStore(dataSource, table);
  }

  @Override
  public EventStore events(QueueTable table, Fence fence) {
    return new JdbcEventStore(dataSource, table, fence);
  }

  @Override
  public GroupStore groups() {
    return new JdbcGroupStore(dataSource);
  }

  @Override
  public GroupStore groups(Fence fence) {
    return new JdbcGroupStore(dataSource, fence);
  }

  @Override
  public ScheduleStore schedules() {
    return new JdbcScheduleStore(dataSource);
  }

  @Override
  public ScheduleStore schedules(Fence fence) {
    return new JdbcScheduleStore(dataSource, fence);
  }

  @Override
  public LeaseStore leases() {
    return new JdbcLeaseStore(dataSource);
  }
}
