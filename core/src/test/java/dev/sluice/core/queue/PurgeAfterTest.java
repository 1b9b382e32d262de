package dev.sluice.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.loop.FakeTicker;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.db.DataSources;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.SQLException;
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

  final FakeTicker ticker = new FakeTicker();

  /** A queue whose clock runs on the test's ticker, anchored once to the database's time. */
  QueueContext queue(String name, String options) throws SQLException {
    return QueueContexts.create(db, ds, name, "sluice_queue " + options, ticker);
  }

  static EventRef fireOne(QueueContext ctx) throws SQLException {
    return QueueContexts.fireOne(db, ctx);
  }

  static long count(String sql) throws SQLException {
    return QueueContexts.count(ds, sql);
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
