package dev.sluice.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
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
