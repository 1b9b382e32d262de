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
   * For each of {@code groups}, a row: its key, then for each of {@code grouped} (in order) the id
   * of its first child open in that table (pending or fired; null when none) and, when {@code
   * dead}, of its first dead child there (null when none, or when the group is not {@code
   * fail_fast}). One statement: a derived table of the groups (key, {@code fail_fast}, and per
   * table the id its check reads from), and per table a correlated subquery on the table's group
   * index, which the server plans once for all the groups (a UNION ALL of a SELECT per group and
   * table, each planned on its own, cost it about twice as much):
   *
   * <ul>
   *   <li>on ({@code group_key}), the convention: {@code select id ... where group_key = k and id
   *       >= f and state in (pending, fired) order by id limit 1}, from {@code seen}'s id on (where
   *       the last check found the group's first open child), in the index's order (its entries end
   *       with the primary key): the settled children it passes are read once over the group's
   *       checks, not at each. This index moves only when a child is inserted or deleted, not at
   *       its fire and ack. A {@code fail_fast} group's dead subquery reads on from there to its
   *       first dead child: up to the rest of the group.
   *   <li>on ({@code group_key}, {@code state}), earlier versions' index: per state {@code select
   *       id ... where group_key = k and state = s limit 1}, one entry read, but that index moves
   *       at each fire and ack of a child.
   * </ul>
   *
   * The keys are compared in {@code group_key}'s binary collation ({@code COLLATE utf8mb4_bin}), so
   * that the index serves and both servers accept the comparison.
   */
  static String probes(
      List<Table> grouped, List<Group> groups, boolean dead, ChildMarks seen, List<Object> values) {
    StringBuilder sql = new StringBuilder("SELECT x.k");
    for (int i = 0; i < grouped.size(); i++) {
      Table t = grouped.get(i);
      sql.append(", ");
      sql.append(
          t.stateIndexed()
              ? "COALESCE(" + any(t, "`state` = ?") + ", " + any(t, "`state` = ?") + ")"
              : first(t, "`id` >= x.f" + i + " AND `state` IN (?, ?)"));
      values.add(t.stateValue(EventState.PENDING));
      values.add(t.stateValue(EventState.FIRED));
      if (dead) {
        sql.append(", CASE WHEN x.ff = 1 THEN ")
            .append(
                t.stateIndexed()
                    ? any(t, "`state` = ?")
                    : first(t, "`id` >= x.f" + i + " AND `state` = ?"))
            .append(" END");
        values.add(t.stateValue(EventState.DEAD));
      }
    }
    List<String> expressions =
        new java.util.ArrayList<>(List.of("CONVERT(? USING utf8mb4) COLLATE utf8mb4_bin", "?"));
    List<String> names = new java.util.ArrayList<>(List.of("k", "ff"));
    for (int i = 0; i < grouped.size(); i++) {
      expressions.add("?");
      names.add("f" + i);
    }
    for (Group group : groups) {
      values.add(group.key());
      values.add(group.failFast() ? 1 : 0);
      for (Table t : grouped) {
        values.add(seen.from(t, group.key()));
      }
    }
    return sql.append(" FROM (")
        .append(boundRows(groups.size(), expressions, names))
        .append(") x")
        .toString();
  }

  /**
   * A derived table of {@code rows} rows of bound values: {@code SELECT e1 AS n1, e2 AS n2 UNION
   * ALL SELECT e1, e2 ...}, each row the {@code expressions} (each with its {@code ?}), the first
   * naming the columns {@code names}.
   */
  static String boundRows(int rows, List<String> expressions, List<String> names) {
    StringBuilder sb = new StringBuilder();
    for (int r = 0; r < rows; r++) {
      sb.append(r == 0 ? "SELECT " : " UNION ALL SELECT ");
      for (int c = 0; c < expressions.size(); c++) {
        sb.append(c == 0 ? "" : ", ")
            .append(expressions.get(c))
            .append(r == 0 ? " AS " + names.get(c) : "");
      }
    }
    return sb.toString();
  }

  /**
   * {@code (SELECT id FROM t FORCE INDEX (group index) WHERE group_key = x.k AND <where> ORDER BY
   * id LIMIT 1)}: the first such child in the group index's order. Named, as MySQL 8 otherwise
   * reads the primary key in order for an {@code ORDER BY id LIMIT 1}, up to the whole table.
   */
  private static String first(Table t, String where) {
    return from(t, where) + " ORDER BY `id` LIMIT 1)";
  }

  /** {@code (SELECT id FROM t FORCE INDEX (group index) WHERE ... LIMIT 1)}: any such child. */
  private static String any(Table t, String where) {
    return from(t, where) + " LIMIT 1)";
  }

  private static String from(Table t, String where) {
    return "(SELECT `id` FROM `"
        + t.name()
        + "`"
        + (t.groupIndex() == null ? "" : " FORCE INDEX (`" + t.groupIndex() + "`)")
        + " WHERE `"
        + QueueColumns.GROUP_KEY
        + "` = x.k AND "
        + where;
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
