package dev.sluice.examples.demo;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.DataSources;
import dev.sluice.db.ShardRouter;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.testkit.EmbeddedMariaDb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import javax.sql.DataSource;

/**
 * The demo's shards: an embedded MariaDB with one database per shard, each migrated by Flyway
 * exactly as a real deployment would be (Sluice's own tables, then the application's {@code
 * db/demo} migrations). With one shard it is the database {@code sluice_demo}, shard {@code demo},
 * covering every key; with N shards, {@code sluice_demo_s0..} with even Vitess-style key ranges
 * ({@code -80}, {@code 80-} for two).
 *
 * <p>All shards live on one server, so a restart or {@code read_only} hits all of them at once.
 */
final class DemoDatabase implements AutoCloseable {
  static final String DATABASE = "sluice_demo";
  static final String QUEUE = "order_events";
  static final String USER = "root";
  static final String PASSWORD = "";
  static final int MAX_SHARDS = 16;
  private static final String MIGRATIONS = "classpath:db/demo";

  /** With {@code --ordered}: makes the queue ordered by {@code ordering_key} (V3). */
  private static final String ORDERED_MIGRATIONS = "classpath:db/demo-ordered";

  /**
   * With {@code --groups}: the grouped queues, the completion queues, the recurring event's queue
   * and the completion handlers' record (V4).
   */
  private static final String GROUPS_MIGRATIONS = "classpath:db/demo-groups";

  /** With {@code sluice demo --long}: the long jobs' queue ({@link LongRun}). */
  private static final String LONG_MIGRATIONS = "classpath:db/demo-long";

  /** One shard: its name (as managers and receivers know it), key range, database and pool. */
  record Shard(String name, String keyRange, String url, HikariDataSource pool) {}

  private final EmbeddedMariaDb server;
  private final List<Shard> shards;
  private final ShardRouter router;
  private final Map<DataSource, Shard> byPool = new IdentityHashMap<>();

  private DemoDatabase(EmbeddedMariaDb server, List<Shard> shards) {
    this.server = server;
    this.shards = List.copyOf(shards);
    ShardRouter.Builder b = ShardRouter.builder();
    for (Shard s : shards) {
      b.shard(s.keyRange(), s.pool());
      byPool.put(s.pool(), s);
    }
    this.router = b.build();
  }

  /** One shard covering every key: the core demo. */
  static DemoDatabase start() {
    return start(1);
  }

  /** Starts the server, creates one database per shard and applies the migrations to each. */
  static DemoDatabase start(int count) {
    return start(count, false);
  }

  /**
   * @param ordered also apply {@code db/demo-ordered}: the queue gets {@code ordering=key}, an
   *     {@code ordering_key} column with its index {@code sluice_ordering}, and {@code key_seq}
   */
  static DemoDatabase start(int count, boolean ordered) {
    return start(count, ordered, false);
  }

  /**
   * @param groups also apply {@code db/demo-groups}: the tables of {@code sluice demo --groups}
   */
  static DemoDatabase start(int count, boolean ordered, boolean groups) {
    List<String> extra = new ArrayList<>();
    if (ordered) {
      extra.add(ORDERED_MIGRATIONS);
    }
    if (groups) {
      extra.add(GROUPS_MIGRATIONS);
    }
    return start(count, extra);
  }

  /** One shard with the long jobs' queue of {@code sluice demo --long}. */
  static DemoDatabase startLong() {
    return start(1, List.of(LONG_MIGRATIONS));
  }

  private static DemoDatabase start(int count, List<String> extraMigrations) {
    if (count < 1 || count > MAX_SHARDS) {
      throw new IllegalArgumentException("shards must be 1.." + MAX_SHARDS + ", was " + count);
    }
    EmbeddedMariaDb server = EmbeddedMariaDb.start();
    List<Shard> made = new ArrayList<>();
    try {
      List<String> ranges = keyRanges(count);
      for (int i = 0; i < count; i++) {
        String name = count == 1 ? "demo" : "s" + i;
        String database = count == 1 ? DATABASE : DATABASE + "_" + name;
        String url = server.createDatabase(database);
        // The application's pool: the producer uses one connection, the report another.
        HikariDataSource pool = DataSources.pool("demo-app-" + name, url, USER, PASSWORD, 4);
        made.add(new Shard(name, ranges.get(i), url, pool));
        List<String> locations = new ArrayList<>(List.of(MIGRATIONS));
        locations.addAll(extraMigrations);
        SluiceMigrations.migrate(pool, locations);
      }
      return new DemoDatabase(server, made);
    } catch (RuntimeException e) {
      made.forEach(s -> s.pool().close());
      server.stopServer();
      throw e;
    }
  }

  /**
   * Even Vitess-style key ranges on one-byte boundaries: {@code -} for one shard; {@code -80},
   * {@code 80-} for two; {@code -55}, {@code 55-aa}, {@code aa-} for three.
   */
  static List<String> keyRanges(int count) {
    if (count == 1) {
      return List.of("-");
    }
    List<String> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String start = i == 0 ? "" : String.format("%02x", i * 256 / count);
      String end = i == count - 1 ? "" : String.format("%02x", (i + 1) * 256 / count);
      out.add(start + "-" + end);
    }
    return out;
  }

  List<Shard> shards() {
    return shards;
  }

  Shard shard(String name) {
    for (Shard s : shards) {
      if (s.name().equals(name)) {
        return s;
      }
    }
    throw new IllegalArgumentException("no shard " + name);
  }

  /** The shard an order (and its event) belongs to, by {@link ShardRouter} on the order id. */
  Shard shardFor(long orderId) {
    return byPool.get(router.dataSourceFor(orderId));
  }

  /**
   * The shard of an ordering key, by {@link ShardRouter} on the key: all of a key's events go to
   * one shard, since ordering holds per shard.
   */
  Shard shardForKey(String key) {
    return byPool.get(router.dataSourceFor(key));
  }

  int port() {
    return server.port();
  }

  /** Events not finished yet on every shard: pending (waiting, retrying, scheduled) or fired. */
  long unfinished() throws SQLException {
    long n = 0;
    for (Shard s : shards) {
      try (Connection c = s.pool().getConnection();
          Statement st = c.createStatement();
          ResultSet rs =
              st.executeQuery("SELECT COUNT(*) FROM " + QUEUE + " WHERE state IN (0, 1)")) {
        rs.next();
        n += rs.getLong(1);
      }
    }
    return n;
  }

  /**
   * The event of an order whose transaction's outcome is unknown (the commit failed, say): present
   * if and only if the transaction committed, since the order and its event commit together.
   */
  OptionalLong eventOfOrder(String shard, long orderId) throws SQLException {
    try (Connection c = shard(shard).pool().getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT id FROM " + QUEUE + " WHERE order_id = ?")) {
      ps.setLong(1, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
      }
    }
  }

  /** SET GLOBAL read_only: the server holds every shard, so all of them turn read-only. */
  void setReadOnly(boolean on) throws SQLException {
    try (Connection c = shards.get(0).pool().getConnection();
        Statement st = c.createStatement()) {
      st.execute("SET GLOBAL read_only = " + (on ? 1 : 0));
    }
  }

  /** Stops and starts the server on the same port, keeping the data: every shard goes down. */
  void restartServer() {
    server.restartServer();
  }

  /** Closes the pools, then stops the server (its data is deleted). */
  @Override
  public void close() {
    shards.forEach(s -> s.pool().close());
    server.stopServer();
  }
}
