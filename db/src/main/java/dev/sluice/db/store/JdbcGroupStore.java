package dev.sluice.db.store;

import static dev.sluice.db.store.GroupSql.*;

import dev.sluice.client.QueueColumns;
import dev.sluice.db.EventState;
import dev.sluice.db.QueueTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The event groups of one shard ({@code sluice_group}, migration V9; README, "Event groups").
 *
 * <p>A group's children are rows of any queue table of the shard with a {@code group_key} column;
 * its completion event is a row of a queue table with a {@code completes_group} column. The
 * leader's writes, each conditioned on its {@link Fence}:
 *
 * <ul>
 *   <li>{@link #seal}: when a poll first reads a completion event, the group's row is inserted and
 *       the completion event is held out of every poll's range ({@code time_next + HELD_NS}, a
 *       compare-and-set on its epoch), in one transaction; a poll's groups together when each can
 *       be ({@link GroupSealing}). A second completion event of the same key finds the row taken.
 *   <li>{@link #complete}: once no child is pending or fired (or, with {@code fail_fast}, one is
 *       dead), the counts, {@code state = 'completed'} and the release of the completion event, in
 *       one transaction that locks the group's row: the completion event is released exactly once
 *       ({@link GroupCompletion}, many groups per transaction).
 * </ul>
 *
 * <p>The check that a group may complete is a probe per grouped table on its {@code group_key}
 * index for the group's first open child, from where the last check found it ({@link ChildMarks}),
 * never a count over the group; the count by state is read once, at completion, and decides.
 *
 * <p>Any thread may call it; its state is the fence and the checks' marks ({@link ChildMarks},
 * thread-safe), which only the leader's closer's checks use.
 */
public final class JdbcGroupStore implements GroupStore {
  private final DataSource ds;
  private final Fence fence;
  private final GroupTables tables;
  private final GroupCompletion completion;
  private final GroupSealing sealing;

  /** Where the checks found each group's first open child (the leader's closer's hints). */
  private final ChildMarks seen = new ChildMarks();

  /** Groups per check statement, at most ({@link GroupSql#probes}: a row of them each). */
  static final int PROBE_GROUPS = 150;

  /** MySQL's and MariaDB's "Key ... doesn't exist in table ..." (a FORCE INDEX's index). */
  private static final int ER_KEY_DOES_NOT_EXIST = 1176;

  /** MySQL's and MariaDB's "Table ... doesn't exist" (a shard not migrated yet). */
  private static final int ER_NO_SUCH_TABLE = 1146;

  /** An operator's store (reads only). */
  public JdbcGroupStore(DataSource ds) {
    this(ds, null);
  }

  /** A leader's store: its writes are conditioned on {@code fence}. */
  public JdbcGroupStore(DataSource ds, Fence fence) {
    this.ds = ds;
    this.fence = fence;
    this.tables = new GroupTables(ds);
    this.completion = new GroupCompletion(ds, fence);
    this.sealing = new GroupSealing(ds, fence);
  }

  // ---------------------------------------------------------------- reads

  @Override
  public Map<String, Group> find(Collection<String> keys) {
    Map<String, Group> out = new LinkedHashMap<>();
    if (keys.isEmpty()) {
      return out;
    }
    String sql = SELECT_GROUP + " WHERE group_key IN (" + marks(keys.size()) + ")";
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      int i = 1;
      for (String k : keys) {
        ps.setString(i++, k);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Group g = group(rs);
          out.put(g.key(), g);
        }
      }
      return out;
    } catch (SQLException e) {
      throw fail("read of groups", e);
    }
  }

  @Override
  public Set<String> keysOf(QueueTable table, Collection<Long> ids) {
    Set<String> out = new LinkedHashSet<>();
    if (ids.isEmpty() || !table.hasGroupKey()) {
      return out;
    }
    String sql =
        "SELECT DISTINCT `"
            + QueueColumns.GROUP_KEY
            + "` FROM `"
            + table.name()
            + "` WHERE `id` IN ("
            + marks(ids.size())
            + ") AND `"
            + QueueColumns.GROUP_KEY
            + "` IS NOT NULL";
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      int i = 1;
      for (long id : ids) {
        ps.setLong(i++, id);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
      return out;
    } catch (SQLException e) {
      throw fail("read of the group keys of " + table.name() + " events " + ids, e);
    }
  }

  @Override
  public List<String> completable(Collection<String> keys) {
    List<Group> sealed = new ArrayList<>();
    List<String> all = new ArrayList<>(new LinkedHashSet<>(keys));
    for (int at = 0; at < all.size(); at += 1000) {
      for (Group g : find(all.subList(at, Math.min(all.size(), at + 1000))).values()) {
        if (!g.completed()) {
          sealed.add(g);
        }
      }
    }
    return mayComplete(sealed);
  }

  @Override
  public SweepPage sweep(SweepMark after, int limit) {
    String sql =
        SELECT_GROUP
            + " WHERE state = '"
            + SEALED
            + "'"
            + (after == null ? "" : " AND (sealed_ns > ? OR (sealed_ns = ? AND group_key > ?))")
            + " ORDER BY state, sealed_ns, group_key LIMIT "
            + Math.max(1, limit);
    List<Group> page = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      if (after != null) {
        ps.setLong(1, after.sealedNs());
        ps.setLong(2, after.sealedNs());
        ps.setString(3, after.key());
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          page.add(group(rs));
        }
      }
    } catch (SQLException e) {
      throw fail("read of sealed groups", e);
    }
    Group last = page.size() < Math.max(1, limit) ? null : page.get(page.size() - 1);
    return new SweepPage(
        mayComplete(page), last == null ? null : new SweepMark(last.sealedNs(), last.key()));
  }

  /**
   * Those of the {@code sealed} groups that may complete, in their order: the probes of {@link
   * GroupSql#probes}, up to {@link #PROBE_GROUPS} groups per statement.
   */
  private List<String> mayComplete(List<Group> sealed) {
    List<String> out = new ArrayList<>();
    if (sealed.isEmpty()) {
      return out;
    }
    List<Table> grouped = tables.groupedCached();
    Set<String> open = new java.util.HashSet<>();
    Set<String> dead = new java.util.HashSet<>();
    for (int at = 0; at < sealed.size() && !grouped.isEmpty(); at += PROBE_GROUPS) {
      List<Group> part = sealed.subList(at, Math.min(sealed.size(), at + PROBE_GROUPS));
      boolean anyFailFast = part.stream().anyMatch(Group::failFast);
      List<Object> values = new ArrayList<>();
      String sql = GroupSql.probes(grouped, part, anyFailFast, seen, values);
      try (Connection c = ds.getConnection();
          PreparedStatement ps = c.prepareStatement(sql)) {
        bind(ps, values, 1);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String key = rs.getString(1);
            int col = 2;
            for (Table t : grouped) {
              long first = rs.getLong(col++);
              if (!rs.wasNull()) {
                open.add(key);
                if (!t.stateIndexed()) {
                  seen.saw(t, key, first);
                }
              }
              if (anyFailFast) {
                rs.getLong(col++);
                if (!rs.wasNull()) {
                  dead.add(key);
                }
              }
            }
          }
        }
      } catch (SQLException e) {
        if (e.getErrorCode() == ER_KEY_DOES_NOT_EXIST) {
          tables.forget(); // a group index renamed or dropped: read them again at the next check
        }
        throw fail("check of groups", e);
      }
    }
    for (Group g : sealed) {
      if (g.mayComplete(open.contains(g.key()), dead.contains(g.key()))) {
        out.add(g.key());
      }
    }
    return out;
  }

  @Override
  public ChildCounts childCounts(String key) {
    try (Connection c = ds.getConnection()) {
      return GroupSql.childCounts(c, tables.groupedCached(), key);
    } catch (SQLException e) {
      throw fail("count of group " + key + "'s children", e);
    }
  }

  @Override
  public long openCount() {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT COUNT(*) FROM " + TABLE + " WHERE state = '" + SEALED + "'")) {
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw fail("count of open groups", e);
    }
  }

  @Override
  public List<Group> open(int limit) {
    String sql =
        SELECT_GROUP
            + " WHERE state = '"
            + SEALED
            + "' ORDER BY state, sealed_ns LIMIT "
            + Math.max(1, limit);
    List<Group> out = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(group(rs));
      }
      return out;
    } catch (SQLException e) {
      throw fail("read of open groups", e);
    }
  }

  // ---------------------------------------------------------------- the leader (fenced)

  @Override
  public Sealed seal(QueueTable queue, EventRef ref, String key, boolean failFast, long nowNs) {
    return sealing.seal(queue, ref, key, failFast, nowNs);
  }

  @Override
  public boolean sealTogether(
      QueueTable queue, Map<String, EventRef> byKey, boolean failFast, long nowNs) {
    return sealing.sealTogether(queue, byKey, failFast, nowNs);
  }

  @Override
  public Group complete(String key, long nowNs) {
    List<Group> done = completion.complete(List.of(key), nowNs, tables);
    seen.forget(List.of(key));
    return done.isEmpty() ? null : done.get(0);
  }

  /**
   * A transaction per {@link GroupCompletion#BATCH} groups, not one per group: the closer completes
   * hundreds of groups a pass under a grouped drain. The shard's tables are read from the catalog
   * only when the list cached was read before a group of the batch was sealed.
   */
  @Override
  public List<Group> completeAll(
      List<String> keys, long nowNs, java.util.function.BooleanSupplier goOn) {
    List<Group> done = new ArrayList<>();
    for (int at = 0; at < keys.size() && goOn.getAsBoolean(); at += GroupCompletion.BATCH) {
      List<String> batch = keys.subList(at, Math.min(keys.size(), at + GroupCompletion.BATCH));
      done.addAll(completion.complete(batch, nowNs, tables));
      // Completed, or found open by the count over the whole group (a child the marks passed: a
      // dead one replayed, a late one with a lower id): the next check reads it from its first.
      seen.forget(batch);
    }
    return done;
  }

  /**
   * Deletes up to {@code limit} rows of groups completed before {@code beforeNs} whose completion
   * event, of {@code queue}, is no longer pending or fired (it can never be read by a poll again,
   * so the row is not needed to tell it from a new completion event). Fenced.
   */
  @Override
  public int purgeCompleted(QueueTable queue, long beforeNs, int limit) {
    String sql =
        "DELETE FROM "
            + TABLE
            + " WHERE completion_queue = ? AND state = '"
            + COMPLETED
            + "' AND completed_ns < ? AND NOT EXISTS (SELECT 1 FROM `"
            + queue.name()
            + "` q WHERE q.`id` = "
            + TABLE
            + ".completion_id AND q.`state` IN (?, ?))"
            + Fence.sql(fence)
            + " LIMIT "
            + Math.max(1, limit);
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, queue.name());
      ps.setLong(2, beforeNs);
      ps.setObject(3, queue.stateValue(EventState.PENDING));
      ps.setObject(4, queue.stateValue(EventState.FIRED));
      Fence.bind(fence, ps, 5);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw fail("purge of completed groups of " + queue.name(), e);
    }
  }

  @Override
  public long nowNs() {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT " + QueueColumns.NOW_NS_SQL);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw fail("read of the database clock", e);
    }
  }

  @Override
  public OpenGroups openGroups(int limit) {
    List<OpenGroup> oldest = new ArrayList<>();
    long open = 0;
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(GroupSql.openGroups(limit));
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        oldest.add(
            new OpenGroup(
                rs.getString(1),
                rs.getString(2),
                rs.getLong(3),
                Math.max(0, rs.getLong(4) / 1_000_000)));
        open = rs.getLong(5);
      }
    } catch (SQLException e) {
      if (e.getErrorCode() == ER_NO_SUCH_TABLE) {
        return new OpenGroups(0, List.of()); // a shard not migrated yet
      }
      throw fail("read of open groups", e);
    }
    return new OpenGroups(open, List.copyOf(oldest));
  }

  @Override
  public List<Table> grouped() {
    return tables.grouped();
  }
}
