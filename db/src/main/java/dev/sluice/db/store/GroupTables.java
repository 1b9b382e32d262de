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

  private final DataSource ds;
  private volatile Tables tables;

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
    Map<String, Table> byName = new LinkedHashMap<>();
    stateType.forEach(
        (name, type) ->
            byName.put(name, new Table(name, type.equals("enum"), withKey.contains(name))));
    tables = new Tables(mono, readNs, Map.copyOf(byName));
    return byName;
  }
}
