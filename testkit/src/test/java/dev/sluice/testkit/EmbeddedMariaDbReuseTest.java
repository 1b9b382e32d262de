package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * The servers of one process share its unpacked binaries and copy its first install: each is still
 * a server of its own, with its own data (a table created on one is not on the other), and one that
 * stops leaves the other running.
 */
class EmbeddedMariaDbReuseTest {
  static String url(EmbeddedMariaDb s) {
    return "jdbc:mysql://127.0.0.1:" + s.port() + "/?" + EmbeddedMariaDb.URL_OPTIONS;
  }

  static long count(EmbeddedMariaDb s, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(url(s), "root", "");
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  static void exec(EmbeddedMariaDb s, String sql) throws Exception {
    try (Connection c = DriverManager.getConnection(url(s), "root", "");
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  @Test
  void serversOfOneProcessShareTheInstallButNotTheirData() throws Exception {
    try (EmbeddedMariaDb first = EmbeddedMariaDb.start()) {
      exec(first, "CREATE DATABASE only_first");
      exec(first, "CREATE TABLE only_first.t (id INT PRIMARY KEY)");
      try (EmbeddedMariaDb second = EmbeddedMariaDb.start()) {
        assertThat(second.port()).isNotEqualTo(first.port());
        String probe =
            "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'only_first'";
        assertThat(count(second, probe)).as("the first server's database, on the second").isZero();
        assertThat(count(second, "SELECT COUNT(*) FROM mysql.user WHERE user = 'root'"))
            .as("the copied install's accounts")
            .isPositive();
        exec(second, "CREATE DATABASE only_second");
        first.stopServer();
        assertThat(
                count(
                    second,
                    "SELECT COUNT(*) FROM information_schema.SCHEMATA"
                        + " WHERE SCHEMA_NAME = 'only_second'"))
            .isEqualTo(1);
      }
    }
  }
}
