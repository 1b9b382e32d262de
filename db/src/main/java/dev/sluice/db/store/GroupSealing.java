package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.HELD_NS;
import static dev.sluice.db.store.GroupSql.*;

import dev.sluice.db.EventState;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.GroupStore.Sealed;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.jooq.exception.DataAccessException;

/**
 * The seal of event groups ({@link GroupStore#seal}, {@link GroupStore#sealTogether}): a group's
 * row inserted and its completion event held out of every poll's range ({@code time_next +
 * HELD_NS}, a compare-and-set on its epoch), in one transaction, fenced; the groups of one poll
 * together when each can be.
 *
 * <p>Stateless but for the fence: any thread may call it.
 */
final class GroupSealing {
  private final DataSource ds;
  private final Fence fence;

  GroupSealing(DataSource ds, Fence fence) {
    this.ds = ds;
    this.fence = fence;
  }

  /** {@link GroupStore#seal}. */
  Sealed seal(QueueTable queue, EventRef ref, String key, boolean failFast, long nowNs) {
    String insert =
        "INSERT INTO "
            + TABLE
            + " (group_key, state, completion_queue, completion_id, completion_epoch, on_dead,"
            + " sealed_ns) SELECT ?, '"
            + SEALED
            + "', ?, ?, ?, ?, ? FROM DUAL"
            + (fence == null ? "" : " WHERE " + Fence.EXISTS);
    String hold =
        "UPDATE `"
            + queue.name()
            + "` SET `time_next` = `time_next` + "
            + HELD_NS
            + " WHERE `id` = ? AND `epoch` = ? AND `state` = ? AND `time_next` < "
            + HELD_NS
            + Fence.sql(fence);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        int n;
        try (PreparedStatement ps = c.prepareStatement(insert)) {
          ps.setString(1, key);
          ps.setString(2, queue.name());
          ps.setLong(3, ref.id());
          ps.setLong(4, ref.epoch());
          ps.setString(5, onDead(failFast));
          ps.setLong(6, nowNs);
          Fence.bind(fence, ps, 7);
          n = ps.executeUpdate();
        } catch (SQLException e) {
          if (e.getErrorCode() == 1062) {
            c.rollback();
            return Sealed.TAKEN;
          }
          throw e;
        }
        if (n == 0) {
          throw refusedOrFail(c, queue.name());
        }
        try (PreparedStatement ps = c.prepareStatement(hold)) {
          ps.setLong(1, ref.id());
          ps.setLong(2, ref.epoch());
          ps.setObject(3, queue.stateValue(EventState.PENDING));
          Fence.bind(fence, ps, 4);
          n = ps.executeUpdate();
        }
        if (n == 0) {
          Fence.rollBack(fence, c, queue.name() + " (event groups)");
          return Sealed.CHANGED;
        }
        c.commit();
        return Sealed.SEALED;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw fail("seal of group " + key + " by " + queue.name() + " event " + ref.id(), e);
    }
  }

  /**
   * {@link GroupStore#sealTogether}: the groups' rows in one INSERT, their completion events held
   * in one UPDATE (each row under its own compare-and-set), one commit. Any shortfall (a row taken,
   * an event changed) or failed statement rolls it all back.
   */
  boolean sealTogether(
      QueueTable queue, Map<String, EventRef> byKey, boolean failFast, long nowNs) {
    int n = byKey.size();
    String rows = boundRows(n, List.of("?", "?", "?"), List.of("k", "i", "e"));
    String insert =
        "INSERT INTO "
            + TABLE
            + " (group_key, state, completion_queue, completion_id, completion_epoch, on_dead,"
            + " sealed_ns) SELECT v.k, '"
            + SEALED
            + "', ?, v.i, v.e, ?, ? FROM ("
            + rows
            + ") v"
            + (fence == null ? "" : " WHERE " + Fence.EXISTS);
    StringBuilder each = new StringBuilder();
    for (int i = 0; i < n; i++) {
      each.append(i == 0 ? "(" : " OR (").append("`id` = ? AND `epoch` = ?)");
    }
    String hold =
        "UPDATE `"
            + queue.name()
            + "` SET `time_next` = `time_next` + "
            + HELD_NS
            + " WHERE ("
            + each
            + ") AND `id` IN ("
            + marks(n)
            + ") AND `state` = ? AND `time_next` < "
            + HELD_NS
            + Fence.sql(fence);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        int inserted;
        try (PreparedStatement ps = c.prepareStatement(insert)) {
          int at = 1;
          ps.setString(at++, queue.name());
          ps.setString(at++, onDead(failFast));
          ps.setLong(at++, nowNs);
          for (Map.Entry<String, EventRef> e : byKey.entrySet()) {
            ps.setString(at++, e.getKey());
            ps.setLong(at++, e.getValue().id());
            ps.setLong(at++, e.getValue().epoch());
          }
          Fence.bind(fence, ps, at);
          inserted = ps.executeUpdate();
        }
        if (inserted == 0) {
          throw refusedOrFail(c, queue.name());
        }
        int held;
        try (PreparedStatement ps = c.prepareStatement(hold)) {
          int at = 1;
          for (EventRef r : byKey.values()) {
            ps.setLong(at++, r.id());
            ps.setLong(at++, r.epoch());
          }
          for (EventRef r : byKey.values()) {
            ps.setLong(at++, r.id());
          }
          ps.setObject(at++, queue.stateValue(EventState.PENDING));
          Fence.bind(fence, ps, at);
          held = ps.executeUpdate();
        }
        if (inserted != n || held != n) { // a group's row taken, or an event changed
          Fence.rollBack(fence, c, queue.name() + " (event groups)");
          return false;
        }
        c.commit();
        return true;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      // Each on its own tells which group's seal fails, and keeps the others going.
      return false;
    }
  }

  private RuntimeException refusedOrFail(Connection c, String queue) throws SQLException {
    FencedOffException refused = Fence.check(fence, c, queue + " (event groups)");
    c.rollback();
    return refused != null
        ? refused
        : new DataAccessException(TABLE + ": a fenced insert for " + queue + " wrote nothing");
  }
}
