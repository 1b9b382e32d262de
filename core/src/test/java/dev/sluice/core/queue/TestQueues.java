package dev.sluice.core.queue;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.loop.Ticker;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.EventRef;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.SQLException;
import java.time.Clock;

/**
 * A test class's own database and pool, and the queue contexts on it ({@link QueueContexts}), for
 * the tests that drive a queue's parts one pass at a time: made in {@code @BeforeAll}, closed in
 * {@code @AfterAll}.
 */
public final class TestQueues implements AutoCloseable {
  public final TestDatabase db;
  public final HikariDataSource ds;

  private TestQueues(TestDatabase db, HikariDataSource ds) {
    this.db = db;
    this.ds = ds;
  }

  /** A fresh database for {@code test}, and a pool of four on it. */
  public static TestQueues fresh(Class<?> test) {
    TestDatabase db = TestDatabases.fresh(test);
    return new TestQueues(
        db, DataSources.pool(test.getSimpleName(), db.url(), db.user(), db.password(), 4));
  }

  /** The queue table {@code name} with {@code options} in its comment, and its context. */
  public QueueContext create(String name, String options) throws SQLException {
    return QueueContexts.create(db, ds, name, "sluice_queue " + options);
  }

  /** The same, with the queue's clock on {@code ticker}, anchored once to the database's time. */
  public QueueContext create(String name, String options, Ticker ticker) throws SQLException {
    return QueueContexts.create(db, ds, name, "sluice_queue " + options, ticker);
  }

  /** The context of a table the test made, on the system clock (not yet synced to the database). */
  public QueueContext context(QueueTable table) {
    return QueueContexts.context(ds, table, new DbClock(Clock.systemUTC()));
  }

  /** The queue table {@code name} as discovery finds it now. */
  public QueueTable discover(String name) {
    return QueueContexts.discover(ds, name);
  }

  /** One event due now, fired; its next epoch ({@link QueueContexts#fireOne}). */
  public EventRef fireOne(QueueContext ctx) throws SQLException {
    return QueueContexts.fireOne(db, ctx);
  }

  /** The first column of the first row of {@code sql}, as a number. */
  public long count(String sql) throws SQLException {
    return QueueContexts.count(ds, sql);
  }

  @Override
  public void close() {
    ds.close();
  }
}
