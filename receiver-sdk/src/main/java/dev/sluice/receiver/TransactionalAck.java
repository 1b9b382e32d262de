package dev.sluice.receiver;

import dev.sluice.client.AckSql;
import dev.sluice.client.QueueColumns;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Acks an event inside the handler's own database transaction, so that the handler's writes and the
 * ack commit together or not at all.
 *
 * <pre>{@code
 * receiver handler: event -> {
 *   try (Connection c = dataSource.getConnection()) {
 *     c.setAutoCommit(false);
 *     insertShipment(c, event.getLong("order_id"));
 *     TransactionalAck.ack(c, event);   // same compare-and-set as the manager's ack
 *     c.commit();
 *   }
 * }
 * }</pre>
 *
 * <p>The connection must reach the database that holds the event's queue table (the event's shard)
 * and be inside a transaction (auto-commit off). The statement is the manager's own ack ({@link
 * AckSql}, shared with it): {@code fired → acked} guarded by the id, the state and the delivered
 * epoch, so it applies only to the attempt this handler was given. When the handler then returns
 * normally, the receiver tells the manager that the ack is committed: the manager lets go of the
 * event without an UPDATE of its own and without counting a stale ack. When the transaction rolls
 * back and the handler throws, the event is nacked and retried as usual; the rolled-back ack left
 * no trace.
 *
 * <p>For a queue whose {@code state} column is the default TINYINT, the statement is
 *
 * <pre>
 * update `queue` set `state` = 2,
 *     `time_acked` = (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000),
 *     `time_next`  = (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000)
 *  where `id` in (?) and `state` = 1 and `epoch` = ?
 * </pre>
 *
 * <p>(the database's now in ns, {@link QueueColumns#NOW_NS_SQL}, whatever the session's time zone,
 * as Sluice's own clock)
 *
 * <p>(with an ENUM state column: {@code 'acked'} and {@code 'fired'}). One row changed: acked;
 * none: this attempt no longer applies (it timed out and was fired again, or was acked already).
 *
 * <p>Thread-safe: the only state is a cache of each table's state column type.
 */
public final class TransactionalAck {
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

  /** Per schema and table: whether {@code state} is an ENUM (else TINYINT codes). */
  private static final Map<String, Boolean> ENUM_STATE = new ConcurrentHashMap<>();

  private TransactionalAck() {}

  /**
   * Runs the ack's compare-and-set on {@code c}, in the caller's transaction. Returns true when it
   * applied (the row was fired at the delivered epoch); the ack then takes effect when the caller
   * commits. Returns false when this attempt no longer applies: the caller should roll back its
   * writes (another attempt of the event may run, or already ran, them).
   *
   * @throws IllegalStateException if {@code c} is in auto-commit mode (the ack would commit alone)
   */
  public static boolean ack(Connection c, ReceivedEvent event) throws SQLException {
    if (c.getAutoCommit()) {
      throw new IllegalStateException(
          event.describe()
              + ": a transactional ack needs a connection inside a transaction (auto-commit"
              + " off); in auto-commit mode it would commit without the handler's writes");
    }
    String table = event.queue();
    boolean enumState = enumState(c, table);
    try (PreparedStatement ps = c.prepareStatement(sql(table, enumState))) {
      ps.setLong(1, event.id());
      ps.setLong(2, event.epoch());
      boolean applied = ps.executeUpdate() == 1;
      if (applied) {
        event.markAckedInTransaction();
      }
      return applied;
    }
  }

  /**
   * The ack statement for {@code table}, with the id and then the epoch as parameters.
   *
   * @param enumState true when the {@code state} column is an ENUM of the state names
   */
  public static String sql(String table, boolean enumState) {
    if (table == null || !IDENTIFIER.matcher(table).matches()) {
      throw new IllegalArgumentException("not a queue table name: '" + table + "'");
    }
    String acked = enumState ? "'acked'" : "2";
    String fired = enumState ? "'fired'" : "1";
    return "update `"
        + table
        + "` set "
        + AckSql.set(acked, QueueColumns.NOW_NS_SQL)
        + " where "
        + AckSql.guard(1, fired);
  }

  private static boolean enumState(Connection c, String table) throws SQLException {
    String schema = c.getCatalog();
    String key = schema + "." + table;
    Boolean known = ENUM_STATE.get(key);
    if (known != null) {
      return known;
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT DATA_TYPE FROM information_schema.COLUMNS"
                + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'state'")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException(
              "queue table "
                  + table
                  + " with a state column not found in database "
                  + schema
                  + ": is this connection to the event's shard?");
        }
        boolean isEnum = "enum".equals(rs.getString(1).toLowerCase(Locale.ROOT));
        ENUM_STATE.put(key, isEnum);
        return isEnum;
      }
    }
  }
}
