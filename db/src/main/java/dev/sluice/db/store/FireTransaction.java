package dev.sluice.db.store;

import dev.sluice.db.EventState;
import dev.sluice.db.QueueTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * The fire of a group of polled events, as one transaction on one connection (see {@link
 * EventStore#fireAsPolled}):
 *
 * <ol>
 *   <li>{@code SELECT <the poll's columns> ... FORCE INDEX (PRIMARY) WHERE id IN (...) AND state =
 *       pending FOR UPDATE SKIP LOCKED}: the rows as they are now, locked; rows another transaction
 *       holds are skipped at once instead of waited for.
 *   <li>Per row: fired if its epoch and {@code time_next} are as polled; made dead if its epoch is
 *       at the column's maximum ({@code epoch + 1} would fail the whole statement) or a column
 *       cannot be read; otherwise left alone (changed).
 *   <li>One UPDATE per epoch by primary key, the dead rows' UPDATE and their reasons; commit.
 * </ol>
 *
 * A leader's store conditions each UPDATE on its lease ({@link Fence}): when one changes fewer of
 * the locked rows than it must, the fence row is read and the transaction rolled back with a {@link
 * FencedOffException} if the lease is another's. Nothing applies unless the commit does: a call
 * abandoned by its client (a socket timeout) is rolled back by the server, never applied later. Ids
 * missing from the locked read are told apart by a plain read (rare): still pending at the polled
 * epoch means locked by someone else.
 */
final class FireTransaction {
  private final DataSource ds;
  private final QueueTable q;
  private final HotSql hot;
  private final long maxEpoch;

  FireTransaction(DataSource ds, QueueTable q, HotSql hot) {
    this.ds = ds;
    this.q = q;
    this.hot = hot;
    this.maxEpoch = maxEpoch(q);
  }

  /** The largest value the epoch column holds, from its declared type. */
  static long maxEpoch(QueueTable q) {
    var c = q.columns() == null ? null : q.columns().get(dev.sluice.db.QueueConvention.EPOCH);
    if (c == null) {
      return Long.MAX_VALUE;
    }
    boolean unsigned = c.columnType().toLowerCase(java.util.Locale.ROOT).contains("unsigned");
    return switch (c.dataType()) {
      case "tinyint" -> unsigned ? 255 : 127;
      case "smallint" -> unsigned ? 65_535 : 32_767;
      case "mediumint" -> unsigned ? 16_777_215 : 8_388_607;
      case "int", "integer" -> unsigned ? 4_294_967_295L : Integer.MAX_VALUE;
      default -> Long.MAX_VALUE;
    };
  }

  FireResult fire(List<FireRef> refs, LongSupplier deadline, BadRowListener bad) {
    Map<Long, FireRef> byId = new LinkedHashMap<>();
    for (FireRef r : refs) {
      byId.putIfAbsent(r.id(), r);
    }
    List<Long> ids = new ArrayList<>(byId.keySet());
    try (Connection c = ds.getConnection()) {
      boolean auto = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        FireResult out = run(c, byId, ids, deadline, bad);
        c.commit();
        return out;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(auto);
      }
    } catch (SQLException e) {
      throw new DataAccessException(q.name() + ": fire failed: " + e.getMessage(), e);
    }
  }

  private FireResult run(
      Connection c,
      Map<Long, FireRef> byId,
      List<Long> ids,
      LongSupplier deadline,
      BadRowListener bad)
      throws SQLException {
    Map<Long, EventRow> rows = new HashMap<>();
    Map<Long, String> unreadable = new LinkedHashMap<>();
    Map<Long, Long> unreadableEpoch = new HashMap<>();
    for (int at = 0; at < ids.size(); at += HotSql.MAX_IN) {
      List<Long> part = ids.subList(at, Math.min(ids.size(), at + HotSql.MAX_IN));
      HotSql.Sql sql = hot.lockPending(part);
      try (PreparedStatement ps = c.prepareStatement(sql.text())) {
        HotSql.bind(ps, sql.values());
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            long id = rs.getLong(1);
            try {
              rows.put(id, hot.row(rs));
            } catch (SQLException | RuntimeException e) {
              unreadable.put(id, HotSql.unreadable(rs, q, e));
              unreadableEpoch.put(id, epochOrNull(rs));
            }
          }
        }
      }
    }
    Map<Long, List<Long>> fireByEpoch = new LinkedHashMap<>();
    Map<Long, EventRow> fired = new LinkedHashMap<>();
    Set<Long> changed = new HashSet<>();
    Map<EventRef, String> dead = new LinkedHashMap<>();
    Set<Long> missing = new HashSet<>();
    for (Long id : ids) {
      FireRef ref = byId.get(id);
      EventRow row = rows.get(id);
      if (unreadable.containsKey(id)) {
        if (Long.valueOf(ref.epoch()).equals(unreadableEpoch.get(id))) {
          dead.put(new EventRef(id, ref.epoch()), unreadable.get(id));
          bad.badRow(id, "unreadable_row", unreadable.get(id));
        } else {
          changed.add(id);
        }
      } else if (row == null) {
        missing.add(id);
      } else if (row.epoch() != ref.epoch()) {
        // Not the attempt the poll saw: fired and settled meanwhile. Dropped.
        continue;
      } else if (row.timeNextNs() != ref.timeNextNs()) {
        changed.add(id);
      } else if (row.epoch() >= maxEpoch) {
        String why = "epoch at the column maximum (" + maxEpoch + "): it cannot be fired again";
        dead.put(new EventRef(id, ref.epoch()), why);
        bad.badRow(id, "epoch_at_max", why);
      } else {
        fireByEpoch.computeIfAbsent(ref.epoch(), k -> new ArrayList<>()).add(id);
        fired.put(id, row);
      }
    }
    long deadlineNs = fired.isEmpty() ? 0 : deadline.getAsLong();
    int expected = 0;
    int changedRows = 0;
    for (Map.Entry<Long, List<Long>> g : fireByEpoch.entrySet()) {
      expected += g.getValue().size();
      changedRows +=
          hot.update(c, hot.fire(deadlineNs), g.getValue(), EventState.PENDING, g.getKey());
    }
    if (!dead.isEmpty()) {
      Map<Long, List<Long>> deadByEpoch = new LinkedHashMap<>();
      dead.keySet()
          .forEach(r -> deadByEpoch.computeIfAbsent(r.epoch(), k -> new ArrayList<>()).add(r.id()));
      for (Map.Entry<Long, List<Long>> g : deadByEpoch.entrySet()) {
        expected += g.getValue().size();
        changedRows += hot.update(c, hot.dead(), g.getValue(), EventState.PENDING, g.getKey());
      }
      DeadReasons.record(DSL.using(c, SQLDialect.MYSQL), q.name(), dead);
    }
    if (changedRows < expected) {
      // The rows are locked and were checked above: only the fence refuses them. Rolled back.
      FencedOffException e = hot.fencedOff(c);
      if (e != null) {
        throw e;
      }
    }
    Set<Long> locked = missing.isEmpty() ? Set.of() : stillPending(c, missing, byId);
    Set<Long> deadIds = new HashSet<>();
    dead.keySet().forEach(r -> deadIds.add(r.id()));
    return new FireResult(deadlineNs, fired, locked, changed, deadIds);
  }

  /**
   * The current row's epoch, or null when it does not fit a long (then it is not the polled one).
   */
  private static Long epochOrNull(ResultSet rs) {
    try {
      return rs.getLong(2);
    } catch (SQLException | RuntimeException e) {
      return null;
    }
  }

  /**
   * Of the ids the locked read did not return, those still pending at the polled epoch (a plain,
   * non-locking read): another transaction holds them.
   */
  private Set<Long> stillPending(Connection c, Set<Long> missing, Map<Long, FireRef> byId)
      throws SQLException {
    Set<Long> out = new HashSet<>();
    HotSql.Sql sql = hot.pendingEpochs(new ArrayList<>(missing));
    try (PreparedStatement ps = c.prepareStatement(sql.text())) {
      HotSql.bind(ps, sql.values());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long id = rs.getLong(1);
          if (rs.getLong(2) == byId.get(id).epoch()) {
            out.add(id);
          }
        }
      }
    }
    return out;
  }
}
