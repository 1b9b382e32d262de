package dev.sluice.conformance;

import static org.awaitility.Awaitility.await;

import dev.sluice.db.EventState;
import dev.sluice.db.QueueConvention;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TypedColumns;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** The shard's queue tables as the suite makes, fills and reads them, with plain SQL. */
final class ShardTables {
  private final TestDatabase db;

  ShardTables(TestDatabase db) {
    this.db = db;
  }

  /** A queue table with one user column, {@code n BIGINT}, and {@code extra} columns. */
  void createQueue(String queue, String options, String... extra) throws SQLException {
    List<String> columns = new java.util.ArrayList<>(List.of("`n` BIGINT NULL"));
    columns.addAll(List.of(extra));
    db.exec(QueueConvention.createTableSql(queue, columns, ("sluice_queue " + options).strip()));
  }

  /** A queue table with a column of every type ({@link TypedColumns}). */
  void createTyped(String queue, List<TypedColumns.Column> columns) throws SQLException {
    db.exec(
        QueueConvention.createTableSql(queue, TypedColumns.definitions(columns), "sluice_queue"));
  }

  boolean mariadb() throws SQLException {
    try (Connection c = db.connect()) {
      return TypedColumns.isMariaDb(c);
    }
  }

  /**
   * The typed row (id 1) and the row of NULLs (id 2), written in a session time zone of its own
   * (+05:30): a value that passed through a zone would show.
   */
  void insertTyped(String queue, List<TypedColumns.Column> columns) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("SET time_zone = '+05:30'");
      s.execute(TypedColumns.insertSql(queue, columns, 1, 2));
    }
  }

  void exec(String sql) throws SQLException {
    db.exec(sql);
  }

  /** {@code count} events, in one INSERT. */
  void insert(String queue, int count) throws SQLException {
    List<String> rows = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      rows.add("(" + i + ")");
    }
    db.exec("INSERT INTO " + queue + " (n) VALUES " + String.join(",", rows));
  }

  /** Events of {@code queue} in {@code state}. */
  long count(String queue, EventState state) throws SQLException {
    return queryLong("SELECT COUNT(*) FROM " + queue + " WHERE state = " + state.code());
  }

  /** Waits until {@code n} events of {@code queue} are in {@code state}. */
  void awaitCount(String queue, EventState state, long n) {
    await()
        .atMost(ReceiverConformance.LONG)
        .pollInterval(Duration.ofMillis(100))
        .alias(queue + ": " + n + " events " + state)
        .until(() -> count(queue, state) == n);
  }

  long queryLong(String sql) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? rs.getLong(1) : 0;
    }
  }

  /** Every event of {@code queue} as {@code shard/id}, the key lines are compared by. */
  Set<String> keys(String queue) throws SQLException {
    Set<String> keys = new TreeSet<>();
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement("SELECT id FROM " + queue);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        keys.add(Managers.SHARD + "/" + rs.getLong(1));
      }
    }
    return keys;
  }
}
