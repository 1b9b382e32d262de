package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A discovery reads the schema of every queue table in a fixed number of statements, and finds what
 * reading each table on its own finds: it runs every few seconds on every shard, so what an idle
 * manager asks the database does not grow with its queues.
 */
class CatalogDiscoveryTest {
  static TestDatabase db;
  static HikariDataSource ds;

  @BeforeAll
  static void setUp() throws SQLException {
    db = TestDatabases.fresh(CatalogDiscoveryTest.class);
    // One connection: the session's statement counter is the catalog's.
    ds = DataSources.pool("catalog-test", db.url(), db.user(), db.password(), 1);
    for (int i = 0; i < 8; i++) {
      db.exec(
          QueueConvention.createTableSql(
              "disc_q" + i,
              List.of("payload VARCHAR(32) NULL"),
              "sluice_queue ack_wait=" + (i + 1) + "s"));
    }
    db.exec("CREATE TABLE disc_bad (id BIGINT PRIMARY KEY) COMMENT='sluice_queue'"); // not the
    // convention
    db.exec("CREATE TABLE disc_other (id BIGINT PRIMARY KEY)"); // not a queue
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  static long selects() throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW SESSION STATUS LIKE 'Com_select'")) {
      rs.next();
      return rs.getLong(2);
    }
  }

  @Test
  void nineQueueTablesAreReadInFourStatements() throws SQLException {
    QueueCatalog catalog = new QueueCatalog(ds);
    long before = selects();
    List<QueueCatalog.Discovered> found = catalog.discover();
    long statements = selects() - before;
    assertThat(found).hasSize(9);
    assertThat(statements)
        .as("the list, then the columns, indexes and engines of all of them")
        .isEqualTo(4);
  }

  @Test
  void eachTableIsFoundAsReadingItAloneFindsIt() {
    QueueCatalog catalog = new QueueCatalog(ds);
    for (QueueCatalog.Discovered d : catalog.discover()) {
      QueueCatalog.Discovered alone =
          catalog.inspect(new QueueCatalog.Candidate(d.table(), d.comment()));
      assertThat(d).as(d.table()).isEqualTo(alone);
    }
    QueueCatalog.Discovered bad =
        catalog.discover().stream().filter(d -> d.table().equals("disc_bad")).findFirst().get();
    assertThat(bad.valid()).isFalse();
    assertThat(bad.unreadable()).isFalse();
    assertThat(bad.problem()).contains("disc_bad", "does not follow the convention");
  }
}
