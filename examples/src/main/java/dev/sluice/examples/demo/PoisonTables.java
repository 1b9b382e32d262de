package dev.sluice.examples.demo;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueConvention;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The poison demo's own queue tables on the demo shard, and the SQL it runs on them: what an
 * application (or a careless DBA) would do by hand. Each fault gets its own queue, so that one
 * fault's damage is never mistaken for another's; each has a {@code label} (what the row is for)
 * and a {@code payload} LONGBLOB that can hold an oversized event.
 *
 * <p>Thread-safe: every call takes its own connection from a pool of its own, apart from the demo
 * application's pool, so that a lock held on purpose never starves the demo's producer.
 */
final class PoisonTables implements AutoCloseable {
  /** Short ack_wait and backoffs, as the demo's queue, so that retries show within seconds. */
  static final String COMMENT =
      "sluice_queue ack_wait=5s min_backoff=200ms max_backoff=2s max_attempts=8";

  static final int UNKNOWN_STATE = 9;
  static final int PENDING = 0;
  static final int ACKED = 2;
  static final int DEAD = 3;

  private static final String NOW_NS = QueueConvention.NOW_NS_SQL;

  private final HikariDataSource pool;

  PoisonTables(DemoDatabase.Shard shard) {
    this.pool =
        DataSources.pool("demo-poison", shard.url(), DemoDatabase.USER, DemoDatabase.PASSWORD, 6);
  }

  /** A queue table with {@code label} and {@code payload} user columns. */
  static String createSql(String table, String comment) {
    String valid =
        QueueConvention.createTableSql(
            table,
            List.of("`label` VARCHAR(64) NOT NULL DEFAULT ''", "`payload` LONGBLOB NULL"),
            COMMENT);
    // createTableSql refuses a malformed comment; the malformed-table fault needs one.
    return valid.replace("COMMENT='" + COMMENT + "'", "COMMENT='" + comment + "'");
  }

  void create(String table, String comment) throws SQLException {
    execute(createSql(table, comment));
  }

  /** The database clock, ns since the epoch: the reference for {@code time_next}. */
  long nowNs() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT " + NOW_NS)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * Inserts one event and returns its id.
   *
   * @param dueNs its {@code time_next}, or null for the column's default (now)
   * @param epoch its {@code epoch}, or null for the default (0)
   */
  long insert(String table, String label, byte[] payload, Long dueNs, Long epoch)
      throws SQLException {
    List<String> cols = new ArrayList<>(List.of("label", "payload"));
    List<Object> vals = new ArrayList<>(List.of(label, payload == null ? new byte[0] : payload));
    if (dueNs != null) {
      cols.add("time_next");
      vals.add(dueNs);
    }
    if (epoch != null) {
      cols.add("epoch");
      vals.add(epoch);
    }
    String sql =
        "INSERT INTO `"
            + table
            + "` ("
            + String.join(", ", cols)
            + ") VALUES ("
            + "?, ".repeat(cols.size() - 1)
            + "?)";
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
      for (int i = 0; i < vals.size(); i++) {
        ps.setObject(i + 1, vals.get(i));
      }
      ps.executeUpdate();
      try (ResultSet keys = ps.getGeneratedKeys()) {
        keys.next();
        return keys.getLong(1);
      }
    }
  }

  /** Inserts one event of {@code tenant}, due now, and returns its id. */
  long insert(String table, String label, String tenant) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO `" + table + "` (label, payload, tenant) VALUES (?, ?, ?)",
                Statement.RETURN_GENERATED_KEYS)) {
      ps.setString(1, label);
      ps.setBytes(2, new byte[0]);
      ps.setString(3, tenant);
      ps.executeUpdate();
      try (ResultSet keys = ps.getGeneratedKeys()) {
        keys.next();
        return keys.getLong(1);
      }
    }
  }

  /** Runs one statement with parameters; returns the rows changed. */
  int execute(String sql, Object... args) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      return ps.executeUpdate();
    }
  }

  /** The first column of the first row of a query, as an int; -1 when there is no row. */
  int queryInt(String sql) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getInt(1) : -1;
    }
  }

  /** The state of every row of a table, by id (no payloads are read). */
  Map<Long, Integer> states(String table) throws SQLException {
    Map<Long, Integer> out = new HashMap<>();
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        // (ids above 2^63 - 1, in a BIGINT UNSIGNED id, are no event and read as no long)
        ResultSet rs =
            s.executeQuery("SELECT id, state FROM `" + table + "` WHERE id <= " + Long.MAX_VALUE)) {
      while (rs.next()) {
        out.put(rs.getLong(1), rs.getInt(2));
      }
    }
    return out;
  }

  /** The row's state, or -1 when there is no such row. */
  int state(String table, long id) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT state FROM `" + table + "` WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : -1;
      }
    }
  }

  /** A connection of its own, for a transaction held open on purpose (the row-lock fault). */
  Connection connection() throws SQLException {
    return pool.getConnection();
  }

  /**
   * Why an event is dead, as Sluice recorded it in its {@code sluice_dead_reason} table; empty when
   * that table does not exist or holds nothing for the event. The table's columns are found by name
   * (a column with "reason" in it; the event's id and queue), so the demo reads whatever the
   * migration defines.
   */
  Optional<String> deadReason(String table, long id) throws SQLException {
    List<String> cols = new ArrayList<>();
    try (Connection c = pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT column_name FROM information_schema.columns WHERE table_schema ="
                    + " DATABASE() AND table_name = 'sluice_dead_reason' ORDER BY"
                    + " ordinal_position")) {
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          cols.add(rs.getString(1).toLowerCase());
        }
      }
    }
    String reason = first(cols, "reason");
    String idCol = cols.contains("event_id") ? "event_id" : cols.contains("id") ? "id" : null;
    if (reason == null || idCol == null) {
      return Optional.empty();
    }
    String queueCol = cols.contains("queue") ? "queue" : first(cols, "table");
    String sql =
        "SELECT `"
            + reason
            + "` FROM sluice_dead_reason WHERE `"
            + idCol
            + "` = ?"
            + (queueCol == null ? "" : " AND `" + queueCol + "` = ?");
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, id);
      if (queueCol != null) {
        ps.setString(2, table);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
      }
    }
  }

  private static String first(List<String> cols, String part) {
    return cols.stream().filter(c -> c.contains(part)).findFirst().orElse(null);
  }

  @Override
  public void close() {
    pool.close();
  }
}
