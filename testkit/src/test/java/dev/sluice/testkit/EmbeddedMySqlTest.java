package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** The embedded MySQL 8 starts, serves, keeps its data across a restart and cleans up. */
class EmbeddedMySqlTest {

  @Test
  void startsServesRestartsAndDeletesItsFiles() throws Exception {
    Path root;
    try (EmbeddedMySql server = EmbeddedMySql.start()) {
      assertThat(server.describe()).startsWith("MySQL 8.0.");
      String url = server.createDatabase("probe");
      try (Connection c = DriverManager.getConnection(url, "root", "");
          Statement s = c.createStatement()) {
        assertThat(one(s, "SELECT @@character_set_server")).isEqualTo("utf8mb4");
        assertThat(one(s, "SELECT @@collation_server")).isEqualTo("utf8mb4_unicode_ci");
        assertThat(one(s, "SELECT @@log_bin"))
            .as("the binlog the managers follow, unless SLUICE_TEST_BINLOG=off")
            .isEqualTo(EmbeddedServer.binlogOn() ? "1" : "0");
        if (EmbeddedServer.binlogOn()) {
          assertThat(one(s, "SELECT @@binlog_format")).isEqualTo("ROW");
        }
        assertThat(
                one(
                    s,
                    "SELECT COUNT(*) FROM information_schema.plugins"
                        + " WHERE plugin_name = 'mysqlx' AND plugin_status = 'ACTIVE'"))
            .as("no X protocol port")
            .isEqualTo("0");
        s.execute("CREATE TABLE t (id BIGINT PRIMARY KEY)");
        s.execute("INSERT INTO t VALUES (42)");
      }
      root = Path.of(one(server.serverUrl(), "SELECT @@datadir")).getParent();
      assertThat(root.getFileName().toString()).startsWith("sluice-mysql-");

      server.restartServer();
      assertThat(one(url, "SELECT id FROM t")).isEqualTo("42");
    }
    assertThat(Files.exists(root)).as("%s deleted", root).isFalse();
  }

  private static String one(String url, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "root", "");
        Statement s = c.createStatement()) {
      return one(s, sql);
    }
  }

  private static String one(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
