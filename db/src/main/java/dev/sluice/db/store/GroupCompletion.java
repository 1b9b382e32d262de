package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.HELD_NS;
import static dev.sluice.db.store.GroupSql.*;

import dev.sluice.client.QueueColumns;
import dev.sluice.db.EventState;
import dev.sluice.db.store.GroupStore.ChildCounts;
import dev.sluice.db.store.GroupStore.Group;
import dev.sluice.db.store.GroupStore.Table;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.jooq.exception.DataAccessException;

/**
 * The completion of event groups ({@link GroupStore#complete}): many groups in one transaction, in
 * a fixed number of statements whatever their number.
 *
 * <ol>
 *   <li>lock the groups' rows ({@code FOR UPDATE}, in key order) and keep the sealed ones;
 *   <li>count their children by group and state, one statement per grouped table;
 *   <li>mark those that may complete (no child pending or fired; {@code fail_fast}: or one dead)
 *       completed with their counts: one fenced {@code UPDATE};
 *   <li>release their completion events ({@code time_next - HELD_NS}, a compare-and-set on the
 *       epoch each was held at): one fenced {@code UPDATE} per completion queue;
 *   <li>commit.
 * </ol>
 *
 * <p>A completion event is released exactly once: the group's row, locked, goes from sealed to
 * completed in the same transaction as the release, and a second closer (a new leader) finds it
 * completed. A fence that refuses the mark rolls the whole batch back.
 *
 * <p>Stateless but for the fence: any thread may call it.
 */
final class GroupCompletion {
  /** Groups completed per transaction, at most. */
  static final int BATCH = 200;

  private final DataSource ds;
  private final Fence fence;

  GroupCompletion(DataSource ds, Fence fence) {
    this.ds = ds;
    this.fence = fence;
  }

  /**
   * How much earlier than the seal itself a group's {@code sealed_ns} may be: the sealing manager
   * writes its estimate of the database's clock, which is late by at most a round trip ({@code
   * DbClock}). A list of the shard's tables read later than {@code sealed_ns} plus this holds every
   * table that held the group's children when it was sealed.
   */
  static final long SEAL_CLOCK_SLACK_NS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

  /**
   * Completes those of {@code keys} that are sealed and may complete, in one transaction ({@code
   * keys} at most {@link #BATCH}). Their children are counted in the shard's tables as {@code
   * tables} lists them after the last of the groups was sealed: a child committed before its
   * group's completion event (the README's rule) is in a table that existed at the seal.
   *
   * @return the groups completed, in key order
   * @throws FencedOffException when the fence refused the mark: nothing was written
   */
  List<Group> complete(List<String> keys, long nowNs, GroupTables tables) {
    List<String> sorted = new ArrayList<>(new TreeSet<>(keys));
    if (sorted.isEmpty()) {
      return List.of();
    }
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        List<Group> done = complete(c, sorted, nowNs, tables);
        if (done.isEmpty()) {
          c.rollback();
        } else {
          c.commit();
        }
        return done;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw fail("completion of groups " + abbreviated(sorted), e);
    }
  }

  private List<Group> complete(Connection c, List<String> keys, long nowNs, GroupTables tables)
      throws SQLException {
    Map<String, Group> sealed = lockSealed(c, keys);
    if (sealed.isEmpty()) {
      return List.of();
    }
    long lastSeal = sealed.values().stream().mapToLong(Group::sealedNs).max().orElseThrow();
    Map<String, Table> now = tables.readAfter(lastSeal + SEAL_CLOCK_SLACK_NS);
    Map<String, long[]> counts = count(c, GroupTables.grouped(now), sealed.keySet());
    List<Group> done = new ArrayList<>();
    for (Group g : sealed.values()) {
      ChildCounts n = counts(counts.get(g.key()));
      if (g.mayComplete(n.pending() + n.fired() > 0, n.dead() > 0)) {
        done.add(
            new Group(
                g.key(),
                COMPLETED,
                g.completionQueue(),
                g.completionId(),
                g.completionEpoch(),
                g.onDead(),
                g.sealedNs(),
                nowNs,
                n.acked(),
                n.dead(),
                n.cancelled()));
      }
    }
    if (done.isEmpty()) {
      return done;
    }
    mark(c, done, nowNs);
    release(c, done, now);
    return done;
  }

  /** The rows of {@code keys}, locked; those sealed (not completed), by key. */
  private static Map<String, Group> lockSealed(Connection c, List<String> keys)
      throws SQLException {
    Map<String, Group> out = new LinkedHashMap<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            SELECT_GROUP
                + " WHERE group_key IN ("
                + marks(keys.size())
                + ") ORDER BY group_key FOR UPDATE")) {
      bind(ps, new ArrayList<>(keys), 1);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Group g = group(rs);
          if (!g.completed()) {
            out.put(g.key(), g);
          }
        }
      }
    }
    return out;
  }

  /** The children of the groups {@code keys} by state ({@link EventState#ordinal}), by key. */
  private static Map<String, long[]> count(
      Connection c, List<Table> grouped, java.util.Set<String> keys) throws SQLException {
    Map<String, long[]> out = new HashMap<>();
    for (Table t : grouped) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT `"
                  + QueueColumns.GROUP_KEY
                  + "`, `state`, COUNT(*) FROM `"
                  + t.name()
                  + "` WHERE `"
                  + QueueColumns.GROUP_KEY
                  + "` IN ("
                  + marks(keys.size())
                  + ") GROUP BY `"
                  + QueueColumns.GROUP_KEY
                  + "`, `state`")) {
        bind(ps, new ArrayList<>(keys), 1);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            EventState s = t.decode(rs.getObject(2));
            if (s != null) {
              out.computeIfAbsent(rs.getString(1), k -> new long[EventState.values().length])[
                      s.ordinal()] +=
                  rs.getLong(3);
            }
          }
        }
      }
    }
    return out;
  }

  /** Marks {@code done} completed with their counts: one fenced UPDATE of rows locked above. */
  private void mark(Connection c, List<Group> done, long nowNs) throws SQLException {
    List<Object> values = new ArrayList<>();
    values.add(nowNs);
    StringBuilder sql =
        new StringBuilder("UPDATE ")
            .append(TABLE)
            .append(" SET state = '")
            .append(COMPLETED)
            .append("', completed_ns = ?");
    for (String column : List.of("acked", "dead", "cancelled")) {
      sql.append(", ").append(column).append(" = CASE group_key");
      for (Group g : done) {
        sql.append(" WHEN ? THEN ?");
        values.add(g.key());
        values.add(
            switch (column) {
              case "acked" -> g.acked();
              case "dead" -> g.dead();
              default -> g.cancelled();
            });
      }
      sql.append(" END");
    }
    sql.append(" WHERE group_key IN (").append(marks(done.size())).append(") AND state = '");
    sql.append(SEALED).append("'").append(Fence.sql(fence));
    for (Group g : done) {
      values.add(g.key());
    }
    int n;
    try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
      bind(ps, values, 1);
      Fence.bind(fence, ps, values.size() + 1);
      n = ps.executeUpdate();
    }
    if (n != done.size()) {
      // The rows are locked and sealed: only the fence can refuse them (then all of them).
      FencedOffException refused =
          Fence.check(fence, c, done.get(0).completionQueue() + " (event groups)");
      if (refused != null) {
        throw refused;
      }
      throw new DataAccessException(
          TABLE + ": " + n + " of " + done.size() + " locked sealed groups marked completed");
    }
  }

  /**
   * Releases the completion events of {@code done}: per completion queue one fenced UPDATE, each
   * row under its own compare-and-set (pending, held, at the epoch it was held at). A completion
   * event that changed since (cancelled by hand) or whose table is gone is left as it is.
   */
  private void release(Connection c, List<Group> done, Map<String, Table> now) throws SQLException {
    Map<String, List<Group>> byQueue = new LinkedHashMap<>();
    for (Group g : done) {
      byQueue.computeIfAbsent(g.completionQueue(), k -> new ArrayList<>()).add(g);
    }
    for (Map.Entry<String, List<Group>> e : byQueue.entrySet()) {
      Table cq = now.get(e.getKey());
      if (cq == null) {
        continue;
      }
      List<Group> gs = e.getValue();
      List<Object> values = new ArrayList<>();
      StringBuilder each = new StringBuilder();
      for (Group g : gs) {
        each.append(each.length() == 0 ? "(" : " OR (").append("`id` = ? AND `epoch` = ?)");
        values.add(g.completionId());
        values.add(g.completionEpoch());
      }
      values.add(cq.stateValue(EventState.PENDING));
      for (Group g : gs) {
        values.add(g.completionId());
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "UPDATE `"
                  + cq.name()
                  + "` SET `time_next` = `time_next` - "
                  + HELD_NS
                  + " WHERE ("
                  + each
                  + ") AND `state` = ? AND `id` IN ("
                  + marks(gs.size())
                  + ") AND `time_next` >= "
                  + HELD_NS
                  + Fence.sql(fence))) {
        bind(ps, values, 1);
        Fence.bind(fence, ps, values.size() + 1);
        ps.executeUpdate();
      }
    }
  }

  private static String abbreviated(List<String> keys) {
    return keys.size() <= 3
        ? String.join(", ", keys)
        : String.join(", ", keys.subList(0, 3)) + " and " + (keys.size() - 3) + " more";
  }
}
