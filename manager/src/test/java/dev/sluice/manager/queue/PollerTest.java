package dev.sluice.manager.queue;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The poller's passes, driven one at a time on the test's thread against a real table: the
 * dispatcher is not started, and what the poller hands it is run after each pass.
 */
class PollerTest {
  static TestDatabase db;
  static HikariDataSource ds;

  @BeforeAll
  static void start() {
    db = TestDatabases.fresh(PollerTest.class);
    ds = DataSources.pool("poller-test", db.url(), db.user(), db.password(), 4);
  }

  @AfterAll
  static void stop() {
    ds.close();
  }

  static void exec(String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  static void insert(String table, String tenant, long timeNextNs) throws SQLException {
    exec(
        "INSERT INTO "
            + table
            + " (tenant, time_next) VALUES ('"
            + tenant
            + "', "
            + timeNextNs
            + ")");
  }

  static long nowNs() {
    return System.currentTimeMillis() * 1_000_000L;
  }

  /** One pass of the poller, then the dispatcher takes in what it read. */
  static void pass(Poller p, Dispatcher d) {
    p.pollOnce();
    d.runInbox();
  }

  @Test
  void aQuietTenantsNewEventIsReadByThePassThatRunsAPerTenantRound() throws Exception {
    exec(QueueConvention.createTableSql("poll_rounds", List.of(), "sluice_queue cache_size=100"));
    QueueTable table =
        new QueueCatalog(ds)
            .discover().stream()
                .filter(x -> x.table().equals("poll_rounds"))
                .findFirst()
                .orElseThrow()
                .queue();
    QueueContext ctx =
        new QueueContext(
            "s",
            table,
            new JdbcEventStore(ds, table),
            new DbClock(Clock.systemUTC()),
            new Backoff(table.options().minBackoff(), table.options().maxBackoff()),
            new QueueMetrics(new SimpleMeterRegistry(), "s", "poll_rounds"),
            TenantLimits.of(table.options()));
    Dispatcher d = new Dispatcher(ctx);
    Poller p = new Poller(ctx, d, new RetryCollector(ctx, d));

    // A noisy backlog three times the window, then one quiet event: all due long ago.
    long old = nowNs() - TimeUnit.SECONDS.toNanos(60);
    StringBuilder sb = new StringBuilder("INSERT INTO poll_rounds (tenant, time_next) VALUES ");
    for (int i = 0; i < 300; i++) {
      sb.append(i == 0 ? "" : ",").append("('noisy',").append(old + i).append(")");
    }
    exec(sb.toString());
    insert("poll_rounds", "quiet", old + 1_000);

    pass(p, d); // one poll for all: the window's first 100 rows are noisy, over its 50% share
    assertThat(p.tenantMode()).as("the noisy tenant hit its share").isFalse();
    assertThat(d.held("noisy")).isEqualTo(50);
    pass(p, d); // tenant by tenant: the first round lists both tenants and reads each
    assertThat(p.tenantMode()).isTrue();
    assertThat(d.held("quiet")).isEqualTo(1);

    // The quiet tenant's next event commits; the next pass is one with a per-tenant round.
    insert("poll_rounds", "quiet", nowNs());
    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(TenantRounds.ROUND_EVERY_NS) + 5);
    pass(p, d);
    assertThat(d.held("quiet"))
        .as("the quiet tenant's new event is in the window after one pass, round or not")
        .isEqualTo(2);
    assertThat(d.held("noisy")).as("and the noisy tenant still holds its share").isEqualTo(50);
  }
}
