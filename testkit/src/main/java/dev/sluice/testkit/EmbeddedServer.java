package dev.sluice.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A database server this JVM started for tests, the demo or the bench: {@link EmbeddedMariaDb} or
 * {@link EmbeddedMySql}. It listens on a loopback port, root has no password, and its files are
 * deleted when it is closed.
 */
public interface EmbeddedServer extends AutoCloseable {

  /**
   * Whether embedded servers log a binlog (in ROW format), which the managers follow for new rows:
   * yes, unless the environment sets {@code SLUICE_TEST_BINLOG=off} (then every queue polls alone).
   */
  static boolean binlogOn() {
    return !"off".equalsIgnoreCase(System.getenv("SLUICE_TEST_BINLOG"));
  }

  /** Which server, e.g. {@code MariaDB 10.11.5} or {@code MySQL 8.0.15}. */
  String describe();

  int port();

  /** The JDBC URL of the server without a database. */
  default String serverUrl() {
    return "jdbc:mysql://127.0.0.1:" + port() + "/?" + EmbeddedMariaDb.URL_OPTIONS;
  }

  /** The JDBC URL of one database on this server. */
  default String url(String database) {
    return "jdbc:mysql://127.0.0.1:" + port() + "/" + database + "?" + EmbeddedMariaDb.URL_OPTIONS;
  }

  /** Creates (if missing) a database over JDBC, as root, and returns its URL. */
  default String createDatabase(String database) {
    TestDatabases.requireName(database);
    try (Connection c = DriverManager.getConnection(serverUrl(), "root", "");
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE IF NOT EXISTS `" + database + "`");
    } catch (SQLException e) {
      throw new IllegalStateException("could not create database " + database, e);
    }
    return url(database);
  }

  /** Stops the server, keeping its data for {@link #restartServer()}. */
  void stopServer();

  /** (Re)starts the server on the same port with the same data (for failure tests). */
  void restartServer();

  /** Stops the server; its files are deleted. */
  @Override
  void close();
}
