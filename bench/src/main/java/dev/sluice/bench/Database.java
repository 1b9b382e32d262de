package dev.sluice.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.DataSources;
import dev.sluice.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * One fresh database on the benchmark's server: each peer gets its own, so that no peer sees
 * another's rows, locks or purge work.
 *
 * @param user null when the URL carries it
 */
public record Database(String name, String url, String user, String password) {

  /** A new connection; the caller closes it. */
  public Connection connect() throws SQLException {
    return TestDatabase.connect(url, user, password);
  }

  /** A pool with the Connector/J settings the Sluice manager itself uses. */
  public HikariDataSource pool(String poolName, int size) {
    return DataSources.pool(poolName, url, user, password, size);
  }

  public void exec(String sql) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  public long queryLong(String sql, Object... args) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }
}
