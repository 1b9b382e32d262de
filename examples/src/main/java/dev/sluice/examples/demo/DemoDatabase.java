package dev.sluice.examples.demo;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.DataSources;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.testkit.EmbeddedMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;

/**
 * The demo's shard: an embedded MariaDB with one database, migrated by Flyway exactly as a real
 * deployment would be (Sluice's own tables, then the application's {@code db/demo} migrations).
 */
final class DemoDatabase implements AutoCloseable {
  static final String DATABASE = "sluice_demo";
  static final String QUEUE = "order_events";
  static final String USER = "root";
  static final String PASSWORD = "";
  private static final String MIGRATIONS = "classpath:db/demo";

  private final EmbeddedMariaDb server;
  private final String url;
  private final HikariDataSource pool;

  private DemoDatabase(EmbeddedMariaDb server, String url, HikariDataSource pool) {
    this.server = server;
    this.url = url;
    this.pool = pool;
  }

  /** Starts the server, creates the database and applies the migrations. */
  static DemoDatabase start() {
    EmbeddedMariaDb server = EmbeddedMariaDb.start();
    HikariDataSource pool = null;
    try {
      String url = server.createDatabase(DATABASE);
      // The application's pool: the producer uses one connection, the report another.
      pool = DataSources.pool("demo-app", url, USER, PASSWORD, 4);
      SluiceMigrations.migrate(pool, List.of(MIGRATIONS));
      return new DemoDatabase(server, url, pool);
    } catch (RuntimeException e) {
      if (pool != null) {
        pool.close();
      }
      server.stopServer();
      throw e;
    }
  }

  String url() {
    return url;
  }

  int port() {
    return server.port();
  }

  DataSource dataSource() {
    return pool;
  }

  /** Events not finished yet: pending (waiting, retrying, scheduled) or fired (in flight). */
  long unfinished() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + QUEUE + " WHERE state IN (0, 1)")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Closes the pool, then stops the server (its data is deleted). */
  @Override
  public void close() {
    pool.close();
    server.stopServer();
  }
}
