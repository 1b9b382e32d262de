package dev.sluice.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.fairness.TenantLimits;
import dev.sluice.core.loop.Backoff;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.loop.Ticker;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.context.QueueMetrics;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.List;
import javax.sql.DataSource;

/**
 * One queue's shared context on a real table, for the tests that drive a queue's parts (poller,
 * dispatcher, firer, purger) one pass at a time on the test's thread, without a running engine.
 * Shard {@code s}; each test class keeps its own database and pool.
 */
public final class QueueContexts {
  private QueueContexts() {}

  /** Creates the queue table {@code name} with the comment {@code comment}, and its context. */
  public static QueueContext create(TestDatabase db, DataSource ds, String name, String comment)
      throws SQLException {
    db.exec(QueueConvention.createTableSql(name, List.of(), comment.strip()));
    QueueTable table = discover(ds, name);
    return context(ds, table, new DbClock(Clock.systemUTC()));
  }

  /**
   * As {@link #create(TestDatabase, DataSource, String, String)}, with the queue's clock on {@code
   * ticker}, anchored once to the database's time.
   */
  public static QueueContext create(
      TestDatabase db, DataSource ds, String name, String comment, Ticker ticker)
      throws SQLException {
    db.exec(QueueConvention.createTableSql(name, List.of(), comment.strip()));
    QueueTable table = discover(ds, name);
    DbClock clock = new DbClock(Clock.systemUTC(), ticker);
    clock.sync(new JdbcEventStore(ds, table)::serverTimeNs);
    return context(ds, table, clock);
  }

  /** The context of {@code table} on shard {@code s}, with {@code clock}. */
  public static QueueContext context(DataSource ds, QueueTable table, DbClock clock) {
    return new QueueContext(
        "s",
        table,
        new JdbcEventStore(ds, table),
        clock,
        new QueueMetrics(new SimpleMeterRegistry(), "s", table.name()),
        TenantLimits.of(table.options()));
  }

  /** The queue table {@code name} as discovery finds it. */
  public static QueueTable discover(DataSource ds, String name) {
    return new QueueCatalog(ds)
        .discover().stream().filter(x -> x.table().equals(name)).findFirst().orElseThrow().queue();
  }

  /** One event due now, fired as the firer fires it (deadline now + ack_wait); its next epoch. */
  public static EventRef fireOne(TestDatabase db, QueueContext ctx) throws SQLException {
    long now = ctx.clock().nowNs();
    db.exec("INSERT INTO " + ctx.queue() + " (tenant, time_next) VALUES ('t', " + now + ")");
    EventRow row = ctx.dispatch().pollPending(now, 10).get(0);
    EventRef ref = new EventRef(row.id(), row.epoch());
    long deadline = Backoff.at(ctx.clock().nowNs(), ctx.options().ackWait().toNanos());
    assertThat(ctx.dispatch().fire(List.of(ref), deadline)).containsEntry(ref, CasOutcome.APPLIED);
    return new EventRef(row.id(), row.epoch() + 1);
  }

  /** The first column of the first row of {@code sql}, as a number. */
  public static long count(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
