package dev.sluice.db.store;

import dev.sluice.client.QueueColumns;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.store.GroupStore.Table;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The shard's queue tables (a table comment that marks a queue) with a {@code state} column, read
 * from the catalog (not from the served queues: a grouped table the manager does not serve, a
 * disabled queue's say, still holds children), at most {@link #TABLES_TTL_NS} old, or read after a
 * given instant of the database's clock ({@link #readAfter}). Any thread.
 *
 * <p>The catalog's read is the dearest statement of the groups (on MariaDB it opens every table of
 * the schema: tens of ms under load), so a completion reads it only when the cached list may miss a
 * table that holds its children ({@link #readAfter}).
 */
final class GroupTables {
  static final long TABLES_TTL_NS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

  /**
   * @param readMono when the list was read, on this process's monotonic clock
   * @param readNs the database's clock just before it was read
   */
  private record Tables(long readMono, long readNs, Map<String, Table> byName) {}

  /** How long the grouped tables' index shapes are kept (a new table's is read at once). */
  static final long INDEXES_TTL_NS = java.util.concurrent.TimeUnit.MINUTES.toNanos(1);

  /**
   * A grouped table's group index: its name, and whether it is earlier versions' ({@code
   * group_key}, {@code state}) rather than ({@code group_key}); none when no index starts with
   * {@code group_key}.
   */
  record GroupIndex(String name, boolean stateIndexed) {
    static final GroupIndex NONE = new GroupIndex(null, false);
  }

  /** Each grouped table's group index, read at {@code readMono}. */
  private record IndexShapes(long readMono, Map<String, GroupIndex> byTable) {}

  private final DataSource ds;
  private volatile Tables tables;
  private volatile IndexShapes indexShapes;

  GroupTables(DataSource ds) {
    this.ds = ds;
  }

  /** The tables of the shard that hold children (a {@code group_key} column), read now. */
  List<Table> grouped() {
    return grouped(fresh());
  }

  /** The same, at most {@link #TABLES_TTL_NS} old. */
  List<Table> groupedCached() {
    return grouped(tables());
  }

  /** Those of {@code byName} that hold children. */
  static List<Table> grouped(Map<String, Table> byName) {
    List<Table> out = new ArrayList<>();
    for (Table t : byName.values()) {
      if (t.grouped()) {
        out.add(t);
      }
    }
    return out;
  }

  /**
   * The shard's tables with a {@code state} column, read now: what a group's completion counts and
   * releases with, since a table created within the last second may hold its children.
   */
  Map<String, Table> fresh() {
    tables = null;
    return tables();
  }

  /**
   * The shard's tables with a {@code state} column, read after the database's clock passed {@code
   * afterNs}: the cached list when it was read after that (and at most {@link #TABLES_TTL_NS} ago,
   * so that a table dropped since is soon gone from it), else a new one. A table created before
   * {@code afterNs} is in it.
   */
  Map<String, Table> readAfter(long afterNs) {
    Tables t = tables;
    return t != null && t.readNs() > afterNs ? tables() : fresh();
  }

  /** The shard's tables with a {@code state} column, by name (at most a second old). */
  Map<String, Table> tables() {
    Tables t = tables;
    long mono = System.nanoTime();
    if (t != null && mono - t.readMono() < TABLES_TTL_NS) {
      return t.byName();
    }
    Map<String, String> stateType = new LinkedHashMap<>();
    Set<String> withKey = new java.util.HashSet<>();
    long readNs;
    try (Connection c = ds.getConnection();
        PreparedStatement now = c.prepareStatement("SELECT " + QueueColumns.NOW_NS_SQL);
        ResultSet clock = now.executeQuery();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE, t.TABLE_COMMENT"
                    + " FROM information_schema.COLUMNS c JOIN information_schema.TABLES t"
                    + " ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME"
                    + " WHERE c.TABLE_SCHEMA = DATABASE() AND c.COLUMN_NAME IN ('state', '"
                    + QueueColumns.GROUP_KEY
                    + "')");
        ResultSet rs = ps.executeQuery()) {
      clock.next();
      readNs = clock.getLong(1);
      while (rs.next()) {
        String table = rs.getString(1);
        if (table.equalsIgnoreCase(GroupSql.TABLE)
            || !QueueOptions.isQueueComment(rs.getString(4))) {
          continue; // this store's own table, or an application's table that is no queue
        }
        if (rs.getString(2).equalsIgnoreCase("state")) {
          stateType.put(table, rs.getString(3).toLowerCase(java.util.Locale.ROOT));
        } else {
          withKey.add(table);
        }
      }
    } catch (SQLException e) {
      throw GroupSql.fail("read of the shard's grouped tables", e);
    }
    Map<String, GroupIndex> indexes = groupIndexes(withKey);
    Map<String, Table> byName = new LinkedHashMap<>();
    stateType.forEach(
        (name, type) -> {
          GroupIndex index = indexes.getOrDefault(name, GroupIndex.NONE);
          byName.put(
              name,
              new Table(
                  name,
                  type.equals("enum"),
                  withKey.contains(name),
                  index.stateIndexed(),
                  index.name()));
        });
    tables = new Tables(mono, readNs, Map.copyOf(byName));
    return byName;
  }

  /**
   * Forgets the tables and their indexes: the next use reads them again (a check that named a group
   * index found it gone).
   */
  void forget() {
    indexShapes = null;
    tables = null;
  }

  /**
   * The group index of each of the {@code grouped} tables: read from the catalog for a table not
   * seen before, and for all every {@link #INDEXES_TTL_NS} (the checks read either kind rightly,
   * but each is cheap only when read its own way).
   */
  private Map<String, GroupIndex> groupIndexes(Set<String> grouped) {
    IndexShapes known = indexShapes;
    long mono = System.nanoTime();
    if (known == null || mono - known.readMono() >= INDEXES_TTL_NS) {
      known = new IndexShapes(mono, Map.of());
    }
    Set<String> unknown = new java.util.HashSet<>(grouped);
    unknown.removeAll(known.byTable().keySet());
    Map<String, GroupIndex> shapes = new java.util.HashMap<>(known.byTable());
    shapes.putAll(readGroupIndexes(unknown));
    shapes.keySet().retainAll(grouped);
    indexShapes = new IndexShapes(known.readMono(), Map.copyOf(shapes));
    return shapes;
  }

  /**
   * The group index of each of {@code tables}: an index that starts with {@code group_key}, earlier
   * versions' ({@code group_key}, {@code state}) first when a table has both. A statement per
   * table, naming it, so that MariaDB opens only that table to answer it.
   */
  private Map<String, GroupIndex> readGroupIndexes(Set<String> tables) {
    Map<String, GroupIndex> out = new java.util.HashMap<>();
    if (tables.isEmpty()) {
      return out;
    }
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME FROM information_schema.STATISTICS"
                    + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND SEQ_IN_INDEX <= 2")) {
      for (String table : tables) {
        ps.setString(1, table);
        Map<String, String[]> columns = new java.util.TreeMap<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            columns.computeIfAbsent(rs.getString(1), k -> new String[2])[rs.getInt(2) - 1] =
                rs.getString(3);
          }
        }
        GroupIndex found = GroupIndex.NONE;
        for (Map.Entry<String, String[]> e : columns.entrySet()) {
          String[] cols = e.getValue();
          if (QueueColumns.GROUP_KEY.equalsIgnoreCase(cols[0])) {
            boolean withState = "state".equalsIgnoreCase(cols[1]);
            if (found.name() == null || (withState && !found.stateIndexed())) {
              found = new GroupIndex(e.getKey(), withState);
            }
          }
        }
        out.put(table, found);
      }
    } catch (SQLException e) {
      throw GroupSql.fail("read of the grouped tables' indexes", e);
    }
    return out;
  }
}
