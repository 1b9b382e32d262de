package dev.sluice.db.store;

import dev.sluice.db.QueueConvention;
import dev.sluice.db.schedule.CatchUp;
import dev.sluice.db.schedule.Occurrences;
import dev.sluice.db.schedule.Schedule;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.jooq.exception.DataAccessException;

/**
 * The shard's {@code sluice_schedule} table (migration V8): operators' commands (create, list,
 * pause, resume, delete; unfenced) and the leader's two writes, both conditioned on its {@link
 * Fence}:
 *
 * <ul>
 *   <li>{@link #start}: a schedule not started yet ({@code next_ns = 0}) gets its first occurrence;
 *   <li>{@link #insert}: in ONE transaction, the compare-and-set of {@code next_ns} from the value
 *       the plan was made from to the plan's next, then the occurrences' INSERT into the queue
 *       table. The CAS locks the schedule's row and (by the fence's condition) share-locks the
 *       fence row until the commit, so an occurrence is inserted exactly once: a second leader's
 *       CAS finds {@code next_ns} moved, and a deposed leader's matches nothing once the takeover
 *       wrote the fence.
 * </ul>
 *
 * <p>Stateless but for the fence: any thread may call it; the leader's runner calls it from its one
 * thread.
 */
public final class JdbcScheduleStore implements ScheduleStore {
  static final String TABLE = "sluice_schedule";

  private static final String COLUMNS =
      "name, queue, cron, every_ms, zone, event_columns, catch_up, paused, next_ns, last_ns,"
          + " last_id";

  private final DataSource ds;
  private final Fence fence;

  /** An operator's store: unfenced. */
  public JdbcScheduleStore(DataSource ds) {
    this(ds, null);
  }

  /** A leader's store: {@link #start} and {@link #insert} are conditioned on {@code fence}. */
  public JdbcScheduleStore(DataSource ds, Fence fence) {
    this.ds = ds;
    this.fence = fence;
  }

  // ---------------------------------------------------------------- reads

  /** Every schedule of the shard, by name. */
  @Override
  public List<Schedule> list() {
    return query("SELECT " + COLUMNS + " FROM " + TABLE + " ORDER BY name", null);
  }

  /** The schedule of that name, or null. */
  @Override
  public Schedule get(String name) {
    List<Schedule> l = query("SELECT " + COLUMNS + " FROM " + TABLE + " WHERE name = ?", name);
    return l.isEmpty() ? null : l.get(0);
  }

  /** Now on the shard's clock, ns since the epoch. */
  @Override
  public long nowNs() {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT " + QueueConvention.NOW_NS_SQL)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw fail("clock read", e);
    }
  }

  private List<Schedule> query(String sql, String arg) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      if (arg != null) {
        ps.setString(1, arg);
      }
      List<Schedule> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long every = rs.getLong("every_ms");
          boolean noEvery = rs.wasNull();
          long lastId = rs.getLong("last_id");
          boolean noLastId = rs.wasNull();
          CatchUp catchUp;
          try {
            catchUp = CatchUp.parse(rs.getString("catch_up"));
          } catch (IllegalArgumentException e) {
            catchUp = CatchUp.ONE;
          }
          out.add(
              new Schedule(
                  rs.getString("name"),
                  rs.getString("queue"),
                  rs.getString("cron"),
                  noEvery ? null : every,
                  rs.getString("zone"),
                  rs.getString("event_columns"),
                  catchUp,
                  rs.getInt("paused") != 0,
                  rs.getLong("next_ns"),
                  rs.getLong("last_ns"),
                  noLastId ? null : lastId));
        }
      }
      return out;
    } catch (SQLException e) {
      throw fail("read", e);
    }
  }

  // ---------------------------------------------------------------- operators (unfenced)

  /** Creates a schedule (not started: the leader computes its first occurrence). */
  @Override
  public void create(Schedule s) {
    String sql =
        "INSERT INTO "
            + TABLE
            + " (name, queue, cron, every_ms, zone, event_columns, catch_up, paused, changed_ns)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
            + QueueConvention.NOW_NS_SQL
            + ")";
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      bindDefinition(ps, s);
      ps.setInt(8, s.paused() ? 1 : 0);
      ps.executeUpdate();
    } catch (SQLIntegrityConstraintViolationException e) {
      throw new IllegalArgumentException("schedule " + s.name() + " exists already", e);
    } catch (SQLException e) {
      throw fail("create of schedule " + s.name(), e);
    }
  }

  /**
   * Creates the schedule, or updates its definition when it exists (the Spring starter's beans, at
   * each start). A changed definition restarts it from now ({@code next_ns = 0}); an unchanged one
   * keeps its place, and its paused switch is left as an operator set it.
   *
   * @return true when the row was created or its definition changed
   */
  @Override
  public boolean upsert(Schedule s) {
    String changed =
        "NOT (queue <=> VALUES(queue) AND cron <=> VALUES(cron) AND every_ms <=> VALUES(every_ms)"
            + " AND zone <=> VALUES(zone) AND event_columns <=> VALUES(event_columns)"
            + " AND catch_up <=> VALUES(catch_up))";
    // next_ns and changed_ns first: they compare the old definition with the new.
    String sql =
        "INSERT INTO "
            + TABLE
            + " (name, queue, cron, every_ms, zone, event_columns, catch_up, paused, changed_ns)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, 0, "
            + QueueConvention.NOW_NS_SQL
            + ") ON DUPLICATE KEY UPDATE"
            + " next_ns = IF("
            + changed
            + ", 0, next_ns), changed_ns = IF("
            + changed
            + ", VALUES(changed_ns), changed_ns), queue = VALUES(queue), cron = VALUES(cron),"
            + " every_ms = VALUES(every_ms), zone = VALUES(zone),"
            + " event_columns = VALUES(event_columns), catch_up = VALUES(catch_up)";
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      bindDefinition(ps, s);
      return ps.executeUpdate() > 0;
    } catch (SQLException e) {
      throw fail("upsert of schedule " + s.name(), e);
    }
  }

  private static void bindDefinition(PreparedStatement ps, Schedule s) throws SQLException {
    ps.setString(1, s.name());
    ps.setString(2, s.queue());
    ps.setString(3, s.cron());
    if (s.everyMs() == null) {
      ps.setNull(4, Types.BIGINT);
    } else {
      ps.setLong(4, s.everyMs());
    }
    ps.setString(5, s.zone());
    ps.setString(6, s.columnsJson());
    ps.setString(7, s.catchUp().sql());
  }

  /** Pauses a schedule: no occurrence is inserted from now on. False when there is none. */
  @Override
  public boolean pause(String name) {
    return update("UPDATE " + TABLE + " SET paused = 1, changed_ns = ", name);
  }

  /**
   * Resumes a schedule from now: the occurrences that fell while it was paused are not inserted
   * ({@code next_ns = 0}: the leader computes the next one). False when there is none.
   */
  @Override
  public boolean resume(String name) {
    return update("UPDATE " + TABLE + " SET paused = 0, next_ns = 0, changed_ns = ", name);
  }

  /**
   * Deletes a schedule. Occurrences already inserted (at most the look-ahead before their time)
   * stay events of the queue. False when there is none.
   */
  @Override
  public boolean delete(String name) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("DELETE FROM " + TABLE + " WHERE name = ?")) {
      ps.setString(1, name);
      return ps.executeUpdate() > 0;
    } catch (SQLException e) {
      throw fail("delete of schedule " + name, e);
    }
  }

  private boolean update(String head, String name) {
    String sql = head + QueueConvention.NOW_NS_SQL + " WHERE name = ?";
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, name);
      return ps.executeUpdate() > 0;
    } catch (SQLException e) {
      throw fail("change of schedule " + name, e);
    }
  }

  // ---------------------------------------------------------------- the leader (fenced)

  /**
   * Starts a schedule that has not started ({@code next_ns = 0}) at {@code firstNs}: a CAS from 0,
   * fenced. False when it was started (or paused or deleted) meanwhile.
   *
   * @throws FencedOffException when the fence refused it: another manager leads the shard
   */
  @Override
  public boolean start(Schedule s, long firstNs) {
    String sql =
        "UPDATE "
            + TABLE
            + " SET next_ns = ? WHERE name = ? AND next_ns = 0 AND paused = 0"
            + Fence.sql(fence);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        int n;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.setLong(1, firstNs);
          ps.setString(2, s.name());
          Fence.bind(fence, ps, 3);
          n = ps.executeUpdate();
        }
        if (n == 0) {
          Fence.rollBack(fence, c, s.queue() + " (schedule " + s.name() + ")");
          return false;
        }
        c.commit();
        return true;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw fail("start of schedule " + s.name() + " (queue " + s.queue() + ")", e);
    }
  }

  /**
   * Inserts the plan's occurrences as events of the schedule's queue ({@code time_next} = each
   * occurrence's time, {@code columns} for the rest) and moves {@code next_ns} from {@code
   * s.nextNs()} to {@code plan.next()}, in one transaction, fenced.
   *
   * @return the new events' ids, in the plan's order; null when the CAS found the schedule changed
   *     (advanced by another, paused, resumed or deleted): nothing was written
   * @throws FencedOffException when the fence refused it: nothing was written
   */
  @Override
  public List<Long> insert(Schedule s, Map<String, Object> columns, Occurrences plan) {
    String cas =
        "UPDATE "
            + TABLE
            + " SET next_ns = ?, last_ns = ? WHERE name = ? AND next_ns = ? AND paused = 0"
            + Fence.sql(fence);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        int n;
        try (PreparedStatement ps = c.prepareStatement(cas)) {
          ps.setLong(1, plan.next());
          ps.setLong(
              2, plan.times().isEmpty() ? s.lastNs() : plan.times().get(plan.times().size() - 1));
          ps.setString(3, s.name());
          ps.setLong(4, s.nextNs());
          Fence.bind(fence, ps, 5);
          n = ps.executeUpdate();
        }
        if (n == 0) {
          Fence.rollBack(fence, c, s.queue() + " (schedule " + s.name() + ")");
          return null;
        }
        List<Long> ids = insertRows(c, s.queue(), columns, plan.times());
        if (!ids.isEmpty()) {
          try (PreparedStatement ps =
              c.prepareStatement("UPDATE " + TABLE + " SET last_id = ? WHERE name = ?")) {
            ps.setLong(1, ids.get(ids.size() - 1));
            ps.setString(2, s.name());
            ps.executeUpdate();
          }
        }
        c.commit();
        return ids;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw fail("insert of schedule " + s.name() + "'s occurrences into queue " + s.queue(), e);
    }
  }

  private static List<Long> insertRows(
      Connection c, String queue, Map<String, Object> columns, List<Long> times)
      throws SQLException {
    if (times.isEmpty()) {
      return List.of();
    }
    QueueConvention.requireIdentifier("queue name", queue);
    StringBuilder names = new StringBuilder();
    for (String col : columns.keySet()) {
      names.append('`').append(col).append("`, ");
    }
    names.append('`').append(QueueConvention.TIME_NEXT).append('`');
    String row = "(" + "?, ".repeat(columns.size()) + "?)";
    StringBuilder sql =
        new StringBuilder("INSERT INTO `")
            .append(queue)
            .append("` (")
            .append(names)
            .append(") VALUES ");
    for (int i = 0; i < times.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append(row);
    }
    try (PreparedStatement ps =
        c.prepareStatement(sql.toString(), Statement.RETURN_GENERATED_KEYS)) {
      int p = 1;
      for (long t : times) {
        for (Object v : columns.values()) {
          ps.setObject(p++, v);
        }
        ps.setLong(p++, t);
      }
      ps.executeUpdate();
      List<Long> ids = new ArrayList<>(times.size());
      try (ResultSet keys = ps.getGeneratedKeys()) {
        while (keys.next()) {
          ids.add(keys.getLong(1));
        }
      }
      return ids;
    }
  }

  private static DataAccessException fail(String what, SQLException e) {
    return new DataAccessException("sluice_schedule: " + what + " failed: " + e.getMessage(), e);
  }
}
