package dev.sluice.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;

/** Connection pools for shards, with the Connector/J settings Sluice relies on. */
public final class DataSources {
  private DataSources() {}

  /**
   * A pool for one shard.
   *
   * @param name the pool's name in logs and threads, e.g. {@code sluice-shard-main}
   * @param user null when the URL carries it
   */
  public static HikariDataSource pool(
      String name, String jdbcUrl, String user, String password, int maxSize) {
    return pool(name, jdbcUrl, user, password, maxSize, null);
  }

  /**
   * A pool for one shard whose metrics go to {@code metrics} (e.g. HikariCP's Micrometer tracker);
   * null for none.
   */
  public static HikariDataSource pool(
      String name,
      String jdbcUrl,
      String user,
      String password,
      int maxSize,
      MetricsTrackerFactory metrics) {
    HikariConfig c = new HikariConfig();
    if (metrics != null) {
      c.setMetricsTrackerFactory(metrics);
    }
    c.setPoolName(name);
    c.setJdbcUrl(jdbcUrl);
    if (user != null) {
      c.setUsername(user);
      c.setPassword(password == null ? "" : password);
    }
    c.setMaximumPoolSize(maxSize);
    c.setMinimumIdle(Math.min(2, maxSize));
    c.setConnectionTimeout(5_000);
    c.setValidationTimeout(2_000);
    // Fail fast at start-up is the caller's choice: a shard that is down must not stop the others.
    c.setInitializationFailTimeout(-1);
    // The lease fence (see store.Fence) relies on REPEATABLE READ's locking of the rows a DML
    // statement's subquery reads: whatever the server's default, Sluice's connections use it.
    c.setTransactionIsolation("TRANSACTION_REPEATABLE_READ");
    c.addDataSourceProperty("cachePrepStmts", "true");
    c.addDataSourceProperty("prepStmtCacheSize", "250");
    c.addDataSourceProperty("prepStmtCacheSqlLimit", "8192");
    c.addDataSourceProperty("useLocalSessionState", "true");
    c.addDataSourceProperty("rewriteBatchedStatements", "true");
    c.addDataSourceProperty("cacheServerConfiguration", "true");
    c.addDataSourceProperty("elideSetAutoCommits", "true");
    c.addDataSourceProperty("connectTimeout", "5000");
    c.addDataSourceProperty("socketTimeout", "30000");
    return new HikariDataSource(c);
  }
}
