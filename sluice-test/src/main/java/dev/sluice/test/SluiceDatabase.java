package dev.sluice.test;

import dev.sluice.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * The database one {@link SluiceExtension} runs on.
 *
 * @param url JDBC URL of the database (Connector/J)
 * @param user null when the URL carries it
 * @param password null when the URL carries it
 * @param source where it lives: {@code SLUICE_TEST_JDBC_URL}, {@code docker <image>}, {@code
 *     embedded mysql8} or {@code embedded mariadb} (asked for by {@code SLUICE_TEST_SERVER}), or
 *     {@code embedded} (the default embedded MariaDB)
 */
public record SluiceDatabase(String url, String user, String password, String source) {
  /** A new connection; the caller closes it. */
  public Connection connect() throws SQLException {
    return TestDatabase.connect(url, user, password);
  }

  @Override
  public String toString() {
    // Never the password, not even one written in the URL.
    return "SluiceDatabase["
        + source
        + " "
        + url.replaceAll("(?i)(password=)[^&]*", "$1****")
        + "]";
  }
}
