package dev.sluice.db.store;

import dev.sluice.client.QueueColumns;
import dev.sluice.db.EventState;
import dev.sluice.db.store.GroupStore.ChildCounts;
import dev.sluice.db.store.GroupStore.Group;
import dev.sluice.db.store.GroupStore.Table;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.jooq.exception.DataAccessException;

/** The statements and row reading of {@code sluice_group} that {@link JdbcGroupStore} shares. */
final class GroupSql {
  static final String TABLE = "sluice_group";
  static final String SEALED = "sealed";
  static final String COMPLETED = "completed";

  /** A group's row, as {@link #group} reads it. */
  static final String SELECT_GROUP =
      "SELECT group_key, state, completion_queue, completion_id, completion_epoch, on_dead,"
          + " sealed_ns, completed_ns, acked, dead, cancelled FROM "
          + TABLE;

  /**
   * One statement: the oldest open groups, each row with the count of all of them (a window over
   * the range the state index gives, computed before the LIMIT).
   */
  static String openGroups(int limit) {
    return "SELECT group_key, completion_queue, completion_id, "
        + dev.sluice.client.QueueColumns.NOW_NS_SQL
        + " - sealed_ns, COUNT(*) OVER () FROM sluice_group WHERE state = 'sealed'"
        + " ORDER BY state, sealed_ns LIMIT "
        + limit;
  }

  private GroupSql() {}

  /**
   * The condition that group g may complete: no child pending or fired, or ({@code fail_fast}) a
   * dead one; each probe on the child's key {@code key} (bound) or, when null, g's.
   */
  static String mayComplete(List<Table> grouped, List<Object> values, String key) {
    StringBuilder sb = new StringBuilder("(").append(noneOpen(grouped, values, key));
    if (!grouped.isEmpty()) {
      sb.append(" OR (g.on_dead = 'fail_fast' AND (").append(anyDead(grouped, values, key));
      sb.append("))");
    }
    return sb.append(")").toString();
  }

  /** No child of g pending or fired in any of {@code grouped} (true when there are none). */
  static String noneOpen(List<Table> grouped, List<Object> values, String key) {
    if (grouped.isEmpty()) {
      return "1 = 1";
    }
    StringBuilder sb = new StringBuilder("(");
    for (int i = 0; i < grouped.size(); i++) {
      Table t = grouped.get(i);
      // One probe per state: with an IN list the server seeks the key alone and reads every
      // entry of the group (10,000 for a group of 10,000); with an equality, one entry.
      for (EventState open : List.of(EventState.PENDING, EventState.FIRED)) {
        sb.append(i == 0 && open == EventState.PENDING ? "" : " AND ")
            .append("NOT EXISTS (SELECT 1 FROM `")
            .append(t.name())
            .append("` c WHERE c.`")
            .append(QueueColumns.GROUP_KEY)
            .append("` = ")
            .append(key == null ? "g.group_key" : "?")
            .append(" AND c.`state` = ?)");
        if (key != null) {
          values.add(key);
        }
        values.add(t.stateValue(open));
      }
    }
    return sb.append(")").toString();
  }

  static String anyDead(List<Table> grouped, List<Object> values, String key) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < grouped.size(); i++) {
      Table t = grouped.get(i);
      sb.append(i == 0 ? "" : " OR ")
          .append("EXISTS (SELECT 1 FROM `")
          .append(t.name())
          .append("` c WHERE c.`")
          .append(QueueColumns.GROUP_KEY)
          .append("` = ")
          .append(key == null ? "g.group_key" : "?")
          .append(" AND c.`state` = ?)");
      if (key != null) {
        values.add(key);
      }
      values.add(t.stateValue(EventState.DEAD));
    }
    return sb.toString();
  }

  /** The children of group {@code key} by state, over {@code grouped}, on {@code c}. */
  static ChildCounts childCounts(Connection c, List<Table> grouped, String key)
      throws SQLException {
    long[] by = new long[EventState.values().length];
    for (Table t : grouped) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT `state`, COUNT(*) FROM `"
                  + t.name()
                  + "` WHERE `"
                  + QueueColumns.GROUP_KEY
                  + "` = ? GROUP BY `state`")) {
        ps.setString(1, key);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            EventState s = t.decode(rs.getObject(1));
            if (s != null) {
              by[s.ordinal()] += rs.getLong(2);
            }
          }
        }
      }
    }
    return counts(by);
  }

  /** Counts by state ({@link EventState#ordinal}); none when {@code by} is null. */
  static ChildCounts counts(long[] by) {
    if (by == null) {
      return new ChildCounts(0, 0, 0, 0, 0);
    }
    return new ChildCounts(
        by[EventState.PENDING.ordinal()],
        by[EventState.FIRED.ordinal()],
        by[EventState.ACKED.ordinal()],
        by[EventState.DEAD.ordinal()],
        by[EventState.CANCELLED.ordinal()]);
  }

  static Group group(ResultSet rs) throws SQLException {
    long completed = rs.getLong(8);
    Long completedNs = rs.wasNull() ? null : completed;
    return new Group(
        rs.getString(1),
        rs.getString(2),
        rs.getString(3),
        rs.getLong(4),
        rs.getLong(5),
        rs.getString(6),
        rs.getLong(7),
        completedNs,
        rs.getLong(9),
        rs.getLong(10),
        rs.getLong(11));
  }

  static String marks(int n) {
    return "?" + ",?".repeat(Math.max(0, n - 1));
  }

  static void bind(PreparedStatement ps, List<Object> values, int from) throws SQLException {
    int i = from;
    for (Object v : values) {
      ps.setObject(i++, v);
    }
  }

  static DataAccessException fail(String what, SQLException e) {
    return new DataAccessException(TABLE + ": " + what + " failed: " + e.getMessage(), e);
  }
}
