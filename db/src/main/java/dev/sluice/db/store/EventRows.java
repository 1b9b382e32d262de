package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.*;

import dev.sluice.db.ColumnKind;
import dev.sluice.db.QueueTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.jooq.exception.DataAccessException;

/**
 * Reads the event rows {@link HotSql}'s statements select (the fixed columns 1 to 8, then the user
 * columns) on plain JDBC, leaving out — and saying why — the rows the driver cannot read or whose
 * id or epoch does not fit a long.
 *
 * <p>Thread-safe: immutable after construction; each call takes its own pooled connection.
 */
final class EventRows {
  private final DataSource ds;
  private final QueueTable q;

  /** The table's quoted name, for messages. */
  private final String table;

  /** The 1-based JDBC index of the first user column. */
  private final int userFrom;

  /** Each user column's kind, in select order (null: read as JDBC gives it). */
  private final ColumnKind[] userKinds;

  EventRows(DataSource ds, QueueTable q, String table, int userFrom, ColumnKind[] userKinds) {
    this.ds = ds;
    this.q = q;
    this.table = table;
    this.userFrom = userFrom;
    this.userKinds = userKinds;
  }

  /**
   * Runs a read of event rows. A row the driver cannot decode (a value outside what it accepts for
   * the column's type) does not fail the read: with {@code unreadable} given, it is left out and
   * put there with why (naming the column); without, its unreadable values read as null. A row
   * whose id or epoch does not fit a long is left out either way, and put in {@code outOfRange}
   * when given. The driver holds the whole result in memory, so the rows after it are read as
   * usual.
   */
  List<EventRow> query(
      HotSql.Sql sql, Map<EventRef, String> unreadable, List<OutOfRangeRow> outOfRange) {
    return query(sql, unreadable, outOfRange, false);
  }

  /**
   * A read whose last column, after the user columns, is each row's {@link KeyPlace} by its ordinal
   * ({@link KeySql#firstPending}): the rows come with their places. Unreadable user values read as
   * null.
   */
  List<EventRow> queryPlaced(HotSql.Sql sql) {
    return query(sql, null, null, true);
  }

  private List<EventRow> query(
      HotSql.Sql sql,
      Map<EventRef, String> unreadable,
      List<OutOfRangeRow> outOfRange,
      boolean placed) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql.text())) {
      HotSql.bind(ps, sql.values());
      try (ResultSet rs = ps.executeQuery()) {
        List<EventRow> out = new ArrayList<>();
        while (rs.next()) {
          try {
            out.add(placed ? placed(rs, row(rs)) : row(rs));
          } catch (SQLException | RuntimeException e) {
            if (!fitsLong(rs, 1) || !fitsLong(rs, 2)) {
              if (outOfRange != null) {
                outOfRange.add(outOfRange(rs));
              }
              continue;
            }
            String why = unreadable(rs, q, e);
            if (unreadable != null) {
              unreadable.put(new EventRef(rs.getLong(1), rs.getLong(2)), why);
            } else {
              out.add(placed ? placed(rs, lenientRow(rs)) : lenientRow(rs));
            }
          }
        }
        return out;
      }
    } catch (SQLException e) {
      throw new DataAccessException(q.name() + ": read failed: " + e.getMessage(), e);
    }
  }

  /** Whether column {@code i} of the current row reads as a long (null counts as fitting). */
  private static boolean fitsLong(ResultSet rs, int i) {
    try {
      rs.getLong(i);
      return true;
    } catch (SQLException | RuntimeException e) {
      return false;
    }
  }

  /** The current row, whose id or epoch does not fit a long, with why Sluice cannot serve it. */
  private OutOfRangeRow outOfRange(ResultSet rs) throws SQLException {
    String id = rs.getString(1);
    String epoch = rs.getString(2);
    String what = fitsLong(rs, 1) ? "epoch " + epoch : "id " + id;
    String column = fitsLong(rs, 1) ? EPOCH : ID;
    return new OutOfRangeRow(
        id,
        epoch,
        what
            + " does not fit a signed 64-bit value, so it cannot be carried as an event (the `"
            + column
            + "` column is unsigned: keep its values below 2^63, or ALTER TABLE "
            + table
            + " MODIFY `"
            + column
            + "` BIGINT NOT NULL"
            + (column.equals(ID) ? " AUTO_INCREMENT" : " DEFAULT 0")
            + " once none is above)");
  }

  /** {@code r} with the place its read gave it: the column after the user columns. */
  private EventRow placed(ResultSet rs, EventRow r) throws SQLException {
    return r.withPlace(KeyPlace.values()[rs.getInt(userFrom + userKinds.length)]);
  }

  /** {@link #row}, with null for each user column the driver cannot read. */
  private EventRow lenientRow(ResultSet rs) throws SQLException {
    List<String> names = q.userColumns();
    Map<String, Object> user = new LinkedHashMap<>(names.size() * 2);
    for (int i = 0; i < names.size(); i++) {
      Object v;
      try {
        v = UserColumnReader.plain(rs.getObject(userFrom + i));
      } catch (SQLException | RuntimeException e) {
        v = null;
      }
      user.put(names.get(i), v);
    }
    return withUser(rs, user);
  }

  /**
   * Why the current row of {@code rs} cannot be read: the first column the driver refuses, by name,
   * and its error. For a dead reason and the log, so that the row, not only the value, is named.
   */
  static String unreadable(ResultSet rs, QueueTable q, Exception first) {
    try {
      int n = rs.getMetaData().getColumnCount();
      for (int i = 1; i <= n; i++) {
        try {
          rs.getObject(i);
        } catch (SQLException | RuntimeException e) {
          return "column `"
              + rs.getMetaData().getColumnLabel(i)
              + "` cannot be read: "
              + e.getMessage();
        }
      }
    } catch (SQLException | RuntimeException e) {
      // fall through to the first error
    }
    return "the row cannot be read: " + first.getMessage();
  }

  EventRow row(ResultSet rs) throws SQLException {
    List<String> names = q.userColumns();
    Map<String, Object> user = new LinkedHashMap<>(names.size() * 2);
    for (int i = 0; i < names.size(); i++) {
      user.put(names.get(i), UserColumnReader.read(rs, userFrom + i, userKinds[i]));
    }
    return withUser(rs, user);
  }

  /** The row's fixed columns (1 to 8), with {@code user} as its user columns. */
  private static EventRow withUser(ResultSet rs, Map<String, Object> user) throws SQLException {
    String ten = rs.getString(6);
    return new EventRow(
        rs.getLong(1),
        rs.getLong(2),
        rs.getLong(3),
        rs.getLong(4),
        rs.getInt(5),
        ten == null ? "" : ten,
        rs.getString(7),
        rs.getString(8),
        user);
  }
}
