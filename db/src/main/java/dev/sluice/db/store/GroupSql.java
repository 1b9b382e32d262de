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

  /** {@code on_dead}: a dead child completes the group at once; else it waits for all. */
  static final String FAIL_FAST = "fail_fast";

  static final String WAIT_ALL = "wait_all";

  static String onDead(boolean failFast) {
    return failFast ? FAIL_FAST : WAIT_ALL;
  }

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
   * For each of {@code keys}, each of {@code grouped} and each of the states pending, fired and
   * (with {@code dead}) dead: a row of the key, the state's {@link EventState} ordinal, and the
   * group's first child in that state (null when it has none). One statement: a UNION ALL of blocks
   * {@code select ?, 0, min(id) from t where group_key = ? and state = ?}, which both servers
   * answer from the ({@code group_key}, {@code state}) index while planning it ("Select tables
   * optimized away": one entry read, whatever the group's size).
   *
   * <p>It replaced a check per group of {@code NOT EXISTS} subqueries joined to the group's row,
   * which cost MariaDB several times the planning, and which, correlated over all sealed groups
   * (the sweep), read tens of thousands of entries under a grouped drain.
   */
  static String probes(List<Table> grouped, List<String> keys, boolean dead, List<Object> values) {
    List<EventState> states =
        dead
            ? List.of(EventState.PENDING, EventState.FIRED, EventState.DEAD)
            : List.of(EventState.PENDING, EventState.FIRED);
    StringBuilder sb = new StringBuilder();
    for (String key : keys) {
      for (Table t : grouped) {
        for (EventState s : states) {
          sb.append(sb.length() == 0 ? "SELECT ?, " : " UNION ALL SELECT ?, ")
              .append(s.ordinal())
              .append(", MIN(`id`) FROM `")
              .append(t.name())
              .append("` WHERE `")
              .append(QueueColumns.GROUP_KEY)
              .append("` = ? AND `state` = ?");
          values.add(key);
          values.add(key);
          values.add(t.stateValue(s));
        }
      }
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
