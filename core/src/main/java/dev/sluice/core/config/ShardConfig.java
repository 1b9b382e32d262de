package dev.sluice.core.config;

import dev.sluice.db.KeyRange;

/**
 * One shard: a MySQL/MariaDB primary holding queue tables.
 *
 * @param name short name used in logs, metrics and thread names
 * @param user null when the URL carries it
 * @param poolSize connections the manager may use on this shard
 * @param keyRange the keyspace ids this shard holds, Vitess style ("-80", "80-"; "-" = all)
 * @param binlog whether the leader follows the shard's binlog for new rows (see {@link BinlogMode})
 */
public record ShardConfig(
    String name,
    String jdbcUrl,
    String user,
    String password,
    int poolSize,
    KeyRange keyRange,
    BinlogMode binlog) {
  public static final int DEFAULT_POOL_SIZE = 10;

  public ShardConfig(
      String name, String jdbcUrl, String user, String password, int poolSize, KeyRange keyRange) {
    this(name, jdbcUrl, user, password, poolSize, keyRange, BinlogMode.AUTO);
  }

  public ShardConfig(String name, String jdbcUrl, String user, String password, int poolSize) {
    this(name, jdbcUrl, user, password, poolSize, KeyRange.ALL);
  }

  public ShardConfig {
    if (keyRange == null) {
      keyRange = KeyRange.ALL;
    }
    if (binlog == null) {
      binlog = BinlogMode.AUTO;
    }
    if (name == null || !name.matches("[A-Za-z0-9_-]{1,64}")) {
      throw new IllegalArgumentException(
          "shards[].name must be 1-64 letters, digits, '-' or '_', was '" + name + "'");
    }
    if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:")) {
      throw new IllegalArgumentException(
          "shards["
              + name
              + "].url must be a JDBC URL (jdbc:mysql://host:3306/db), was '"
              + jdbcUrl
              + "'");
    }
    if (poolSize < 2) {
      throw new IllegalArgumentException(
          "shards[" + name + "].pool_size must be >= 2, was " + poolSize);
    }
  }

  /** Never prints the password. */
  @Override
  public String toString() {
    return "ShardConfig[name="
        + name
        + ", url="
        + jdbcUrl.replaceAll("password=[^&]*", "password=****")
        + ", user="
        + user
        + ", password="
        + (password == null || password.isEmpty() ? "(none)" : "****")
        + ", poolSize="
        + poolSize
        + ", keyRange="
        + keyRange
        + ", binlog="
        + binlog
        + "]";
  }
}
