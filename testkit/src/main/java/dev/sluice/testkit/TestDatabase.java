package dev.sluice.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/**
 * One database for one test class. {@code user} and {@code password} are null when the URL carries
 * them.
 */
public record TestDatabase(String name, String url, String user, String password) {

  /** A new connection; the caller closes it. */
  public Connection connect() throws SQLException {
    return connect(url, user, password);
  }

  /**
   * Runs one statement (DDL or DML, no result) on a connection of its own, in autocommit: the
   * tests' set-up and the changes they make behind the code's back.
   */
  public void exec(String sql) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /**
   * A new connection to {@code url}, as {@code user} (null when the URL carries the credentials);
   * the caller closes it.
   */
  public static Connection connect(String url, String user, String password) throws SQLException {
    Properties p = new Properties();
    if (user != null) {
      p.setProperty("user", user);
      p.setProperty("password", password == null ? "" : password);
    }
    return DriverManager.getConnection(url, p);
  }
}
