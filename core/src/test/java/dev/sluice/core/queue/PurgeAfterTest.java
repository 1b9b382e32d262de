package dev.sluice.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.fairness.TenantLimits;
import dev.sluice.core.loop.Backoff;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.loop.FakeTicker;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.context.QueueMetrics;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * purge_after on a ticker the test moves by hand, against a real table: settled events go once it
 * has passed, not before, and fired ones stay. Nothing sleeps; the rule is checked just before and
 * just after its time.
 */
class PurgeAfterTest {
  static TestDatabase db;
  static HikariDataSource ds;

  @BeforeAll
  static void start() {
    db = TestDatabases.fresh(PurgeAfterTest.class);
    ds = DataSources.pool("purge-test", db.url(), db.user(), db.password(), 4);
  }

  @AfterAll
  static void stop() {
    ds.close();
  }

  static long count(String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The queue table {@code name} as discovery finds it. */
  static QueueTable discover(String name) {
    return new QueueCatalog(ds)
        .discover().stream().filter(x -> x.table().equals(name)).findFirst().orElseThrow().queue();
  }

  final FakeTicker ticker = new FakeTicker();

  /** A queue whose clock runs on the test's ticker, anchored once to the database's time. */
  QueueContext queue(String name, String options) throws SQLException {
    db.exec(QueueConvention.createTableSql(name, List.of(), ("sluice_queue " + options).strip()));
    QueueTable table = discover(name);
    JdbcEventStore store = new JdbcEventStore(ds, table);
    DbClock clock = new DbClock(Clock.systemUTC(), ticker);
    clock.sync(store::serverTimeNs);
    return new QueueContext(
        "s",
        table,
        store,
        clock,
        new QueueMetrics(new SimpleMeterRegistry(), "s", name),
        TenantLimits.of(table.options()));
  }

  /** One event due now, fired as the firer fires it: its deadline is now + ack_wait. */
  static EventRef fireOne(QueueContext ctx) throws SQLException {
    long now = ctx.clock().nowNs();
    db.exec("INSERT INTO " + ctx.queue() + " (tenant, time_next) VALUES ('t', " + now + ")");
    EventRow row = ctx.dispatch().pollPending(now, 10).get(0);
    EventRef ref = new EventRef(row.id(), row.epoch());
    long deadline = Backoff.at(ctx.clock().nowNs(), ctx.options().ackWait().toNanos());
    assertThat(ctx.dispatch().fire(List.of(ref), deadline)).containsEntry(ref, CasOutcome.APPLIED);
    return new EventRef(row.id(), row.epoch() + 1);
  }

  @Test
  void settledEventsArePurgedOncePurgeAfterPassed() throws SQLException {
    QueueContext ctx = queue("purge_after", "purge_after=1h");
    EventRef acked = fireOne(ctx);
    assertThat(ctx.dispatch().ack(List.of(acked), ctx.clock().nowNs()))
        .containsEntry(acked, CasOutcome.APPLIED);
    EventRef held = fireOne(ctx); // fired, never acked: never purged
    Purger purger = new Purger(ctx);

    ticker.advance(Duration.ofMinutes(59));
    purger.run();
    assertThat(count("SELECT COUNT(*) FROM purge_after")).as("before purge_after").isEqualTo(2);

    ticker.advance(Duration.ofMinutes(2));
    purger.run();
    assertThat(count("SELECT COUNT(*) FROM purge_after WHERE id = " + acked.id())).isZero();
    assertThat(count("SELECT COUNT(*) FROM purge_after WHERE id = " + held.id())).isEqualTo(1);
  }
}
