package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.*;

import dev.sluice.client.AckSql;
import dev.sluice.db.ColumnInfo;
import dev.sluice.db.ColumnKind;
import dev.sluice.db.EventState;
import dev.sluice.db.QueueTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.jooq.exception.DataAccessException;

/**
 * The statements a queue runs for every event — its polls and the fire and ack compare-and-set —
 * written out as SQL text from fragments made once per table, and run on plain JDBC. Every other
 * statement is built with jOOQ; for these, building and rendering a query per call cost more than
 * running it (in profiles of the benchmarks, a large part of the poller's, firers' and ack writer's
 * CPU and allocation).
 *
 * <p>An IN list is padded to the next power of two with its last id repeated (a repeated id changes
 * nothing in an IN list), so a statement has a few shapes and Connector/J's statement cache holds
 * them all.
 *
 * <p>Errors are jOOQ's {@link DataAccessException}, as from the rest of the store.
 *
 * <p>Thread-safe: immutable after construction; each call takes its own pooled connection.
 */
final class HotSql {
  /** The most ids in one UPDATE; larger sets are split. */
  static final int MAX_IN = 1024;

  private final DataSource ds;
  private final QueueTable q;
  private final String table;
  private final String selectFrom;

  /** The row's columns, without FROM: what every read of event rows selects. */
  private final String selectColumns;

  /** An ordered queue's statements (null for an unordered queue). */
  private final KeySql keys;

  private final String selectFromPollIndex;
  private final String selectFromTenantIndex;

  /** Reads the rows these statements select. */
  private final EventRows rows;

  /** The leader's fence every compare-and-set here is conditioned on; null: unfenced. */
  private final Fence fence;

  /** Whether the id column is BIGINT UNSIGNED: it may hold ids no signed long can carry. */
  private final boolean unsignedId;

  /** A statement's text with {@code ?} for each value, and the values in order. */
  record Sql(String text, List<Object> values) {
    /** The text with the values written in, for EXPLAIN and messages. */
    String inlined() {
      StringBuilder out = new StringBuilder(text.length() + 16 * values.size());
      int v = 0;
      for (int i = 0; i < text.length(); i++) {
        char c = text.charAt(i);
        out.append(c == '?' ? literal(values.get(v++)) : String.valueOf(c));
      }
      return out.toString();
    }

    private static String literal(Object v) {
      if (v instanceof Number) {
        return v.toString();
      }
      return "'" + String.valueOf(v).replace("\\", "\\\\").replace("'", "''") + "'";
    }
  }

  HotSql(DataSource ds, QueueTable q, Fence fence) {
    this.ds = ds;
    this.q = q;
    this.fence = fence;
    this.table = quote(q.name());
    ColumnInfo idInfo = q.columns() == null ? null : q.columns().get(ID);
    this.unsignedId =
        idInfo != null
            && idInfo.columnType().toLowerCase(java.util.Locale.ROOT).contains("unsigned");
    List<String> cols =
        new ArrayList<>(List.of(ID, EPOCH, TIME_NEXT, TIME_CREATED, PRIORITY, TENANT));
    StringBuilder select = new StringBuilder("select ");
    for (String c : cols) {
      select.append(quote(c)).append(", ");
    }
    select.append(q.hasActor() ? quote(ACTOR) : "null as " + quote(ACTOR)).append(", ");
    select.append(q.hasClass() ? quote(CLASS) : "null as " + quote(CLASS));
    int userFrom = cols.size() + 3; // 1-based JDBC index of the first user column
    ColumnKind[] userKinds = new ColumnKind[q.userColumns().size()];
    for (int i = 0; i < userKinds.length; i++) {
      String c = q.userColumns().get(i);
      ColumnInfo info = q.columns() == null ? null : q.columns().get(c);
      userKinds[i] = info == null ? null : ColumnKind.of(info);
      select
          .append(", ")
          .append(userKinds[i] == null ? quote(c) : userKinds[i].selectExpression(quote(c)));
    }
    this.selectColumns = select.toString();
    this.rows = new EventRows(ds, q, table, userFrom, userKinds);
    this.keys = q.options().ordered() && q.orderingIndex() != null ? new KeySql(q) : null;
    this.selectFrom = selectColumns + " from " + table;
    String pollFrom = selectFrom;
    this.selectFromPollIndex =
        q.pollIndex() != null ? pollFrom + " force index (" + quote(q.pollIndex()) + ")" : pollFrom;
    this.selectFromTenantIndex =
        q.hasTenantIndex() ? pollFrom + " force index (" + quote(q.tenantIndex()) + ")" : pollFrom;
  }

  static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  private Object sv(EventState s) {
    return q.stateValue(s);
  }

  // ---------------------------------------------------------------- ordered queues

  /** Whether this is an ordered queue's (with its ordering index). */
  boolean ordered() {
    return keys != null;
  }

  /** An ordered queue's statements. */
  KeySql keys() {
    return keys;
  }

  /** The row's columns, without FROM, as every read of event rows selects them. */
  String selectColumns() {
    return selectColumns;
  }

  // ---------------------------------------------------------------- polls

  /**
   * Pending rows due by {@code dueBeforeNs}, in poll order. The (state, time_next) index is forced:
   * it gives the rows in that order, so LIMIT stops the read; MySQL 8 would otherwise take the
   * (state, tenant, time_next) index for a backlog of a few thousand rows, and sort all of them.
   */
  Sql poll(long dueBeforeNs, int limit) {
    return new Sql(
        selectFromPollIndex
            + " where `state` = ? and `time_next` <= ? order by `time_next`, `id` limit ?",
        List.of(sv(EventState.PENDING), dueBeforeNs, limit));
  }

  /**
   * The same, after (afterTimeNextNs, afterId). The first conjunct keeps it a range on the (state,
   * time_next) index; the OR alone is served by the state prefix only, reading every row before the
   * position.
   */
  Sql pollAfter(long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return new Sql(
        selectFromPollIndex
            + " where `state` = ? and `time_next` <= ? and `time_next` >= ?"
            + " and (`time_next` > ? or `id` > ?) order by `time_next`, `id` limit ?",
        List.of(
            sv(EventState.PENDING), dueBeforeNs, afterTimeNextNs, afterTimeNextNs, afterId, limit));
  }

  /**
   * Several tenants' reads in one statement: a UNION ALL of one index range on (state, tenant,
   * time_next) each. The index is forced: for a tenant that holds most of the table the optimizer
   * would otherwise pick a full scan and a sort, although LIMIT needs only the first rows of the
   * range.
   */
  Sql pollTenants(List<TenantRead> reads, long dueBeforeNs) {
    StringBuilder sb = new StringBuilder();
    List<Object> values = new ArrayList<>(reads.size() * 7);
    for (TenantRead r : reads) {
      sb.append(sb.length() == 0 ? "(" : " union all (")
          .append(selectFromTenantIndex)
          .append(" where `state` = ? and `tenant` = ? and `time_next` <= ?");
      values.add(sv(EventState.PENDING));
      values.add(r.tenant());
      values.add(dueBeforeNs);
      PollPosition after = r.after();
      if (after != null) {
        sb.append(" and `time_next` >= ? and (`time_next` > ? or `id` > ?)");
        values.add(after.timeNextNs());
        values.add(after.timeNextNs());
        values.add(after.id());
      }
      sb.append(" order by `time_next`, `id` limit ?)");
      values.add(r.limit());
    }
    return new Sql(sb.toString(), values);
  }

  /**
   * Dead events after {@code afterId} ({@link Long#MIN_VALUE}: from the first, whatever its id), by
   * id (for the CLI's dead list; not hot, same rows).
   */
  Sql dead(long afterId, int limit) {
    String from = afterId == Long.MIN_VALUE ? " and `id` >= ?" : " and `id` > ?";
    // Ids above 2^63 - 1 (BIGINT UNSIGNED) cannot be carried as a long: see deadOutOfRange.
    String fits = unsignedId ? " and `id` <= " + Long.MAX_VALUE : "";
    return new Sql(
        selectFrom + " where `state` = ?" + from + fits + " order by `id` limit ?",
        List.of(sv(EventState.DEAD), afterId, limit));
  }

  /** The row {@code id}, in any state. */
  Sql byId(long rowId) {
    return new Sql(selectFrom + " where `id` = ?", List.of(rowId));
  }

  /** Dead rows whose id is above 2^63 - 1, by id (none unless the id column is unsigned). */
  Sql deadOutOfRange(int limit) {
    return new Sql(
        "select `id`, `epoch` from "
            + table
            + " where `state` = ? and `id` > "
            + Long.MAX_VALUE
            + " order by `id` limit ?",
        List.of(sv(EventState.DEAD), limit));
  }

  boolean unsignedId() {
    return unsignedId;
  }

  /**
   * pending → dead for a row that cannot be named by a long: its id and epoch are compared as the
   * exact decimal text the database gave ({@code DECIMAL(20,0)} holds every BIGINT, signed or not,
   * and an integer column compared with a decimal is compared exactly).
   */
  Sql deadByDecimal(String id, String epoch) {
    StringBuilder sb =
        new StringBuilder("update ")
            .append(table)
            .append(" force index (PRIMARY) set `state` = ?")
            .append(" where `id` = cast(? as decimal(20,0)) and `state` = ?")
            .append(" and `epoch` = cast(? as decimal(20,0))");
    List<Object> values = new ArrayList<>(List.of(sv(EventState.DEAD), id, sv(EventState.PENDING)));
    values.add(epoch);
    if (fence != null) {
      sb.append(Fence.SQL);
      values.add(fence.shard());
      values.add(fence.token());
    }
    return new Sql(sb.toString(), values);
  }

  List<EventRow> query(Sql sql) {
    return rows.query(sql, null, null);
  }

  /** Runs a read of event rows with their places ({@link EventRows#queryPlaced}). */
  List<EventRow> queryPlaced(Sql sql) {
    return rows.queryPlaced(sql);
  }

  /** Runs a read of event rows ({@link EventRows#query}). */
  List<EventRow> query(Sql sql, Map<EventRef, String> unreadable, List<OutOfRangeRow> outOfRange) {
    return rows.query(sql, unreadable, outOfRange);
  }

  /**
   * The given pending rows, locked by primary key, skipping those another transaction holds (for
   * {@link FireTransaction}).
   */
  Sql lockPending(List<Long> ids) {
    return new Sql(
        selectFrom
            + " force index (PRIMARY) where `id` in ("
            + "?,".repeat(ids.size() - 1)
            + "?) and `state` = ? for update skip locked",
        withState(ids, EventState.PENDING));
  }

  /** The id and epoch of those of {@code ids} that are pending (a plain read, no lock). */
  Sql pendingEpochs(List<Long> ids) {
    return new Sql(
        "select `id`, `epoch` from "
            + table
            + " where `id` in ("
            + "?,".repeat(ids.size() - 1)
            + "?) and `state` = ?",
        withState(ids, EventState.PENDING));
  }

  private List<Object> withState(List<Long> ids, EventState s) {
    List<Object> values = new ArrayList<>(ids.size() + 1);
    values.addAll(ids);
    values.add(sv(s));
    return values;
  }

  /** Why the current row of {@code rs} cannot be read ({@link EventRows#unreadable}). */
  static String unreadable(ResultSet rs, QueueTable q, Exception first) {
    return EventRows.unreadable(rs, q, first);
  }

  EventRow row(ResultSet rs) throws SQLException {
    return rows.row(rs);
  }

  // ---------------------------------------------------------------- compare-and-set

  /**
   * What a compare-and-set UPDATE sets: {@code SET} text with {@code ?}, and its values; {@code
   * also}, a condition (no {@code ?}) the row must meet besides its id, state and epoch, or "".
   */
  record Change(String set, List<Object> values, String also) {
    Change(String set, List<Object> values) {
      this(set, values, "");
    }
  }

  /** pending → fired at the next epoch, due again at the ack deadline. */
  Change fire(long deadlineNs) {
    return new Change(
        "`state` = ?, `epoch` = `epoch` + 1, `time_next` = ?",
        List.of(sv(EventState.FIRED), deadlineNs));
  }

  /** → dead (epoch kept). */
  Change dead() {
    return new Change("`state` = ?", List.of(sv(EventState.DEAD)));
  }

  /**
   * fired → acked at {@code nowNs}: the statement the receiver SDK's transactional ack writes too
   * ({@link AckSql}).
   */
  Change ack(long nowNs) {
    return new Change(AckSql.set("?", "?"), List.of(sv(EventState.ACKED), nowNs, nowNs));
  }

  /**
   * An ordered queue's hold ({@code time_next + HELD_NS}, of a row not held) or release ({@code -
   * HELD_NS}, of a held row); the epoch is kept.
   */
  Change shiftHeld(boolean hold) {
    return new Change(
        "`time_next` = `time_next` " + (hold ? "+ " : "- ") + HELD_NS,
        List.of(),
        " and `time_next` " + (hold ? "< " : ">= ") + HELD_NS);
  }

  /**
   * One autocommit UPDATE per {@link #MAX_IN} ids: {@code change} for the rows among {@code ids}
   * that are in state {@code from} at {@code epoch}. Returns the rows changed.
   */
  int update(Change change, List<Long> ids, EventState from, long epoch) {
    try (Connection c = ds.getConnection()) {
      return update(c, change, ids, from, epoch);
    } catch (SQLException e) {
      throw new DataAccessException(q.name() + ": update failed: " + e.getMessage(), e);
    }
  }

  /** The same on {@code c} (in its transaction, if it has one). */
  int update(Connection c, Change change, List<Long> ids, EventState from, long epoch)
      throws SQLException {
    int n = 0;
    for (int at = 0; at < ids.size(); at += MAX_IN) {
      Sql sql = casSql(change, ids.subList(at, Math.min(ids.size(), at + MAX_IN)), from, epoch);
      try (PreparedStatement ps = c.prepareStatement(sql.text())) {
        bind(ps, sql.values());
        n += ps.executeUpdate();
      }
    }
    return n;
  }

  Sql casSql(Change change, List<Long> ids, EventState from, long epoch) {
    // The next power of two: a few statement shapes, whatever the batch sizes.
    int width = ids.size() == 1 ? 1 : Integer.highestOneBit(ids.size() - 1) << 1;
    StringBuilder sb =
        new StringBuilder(64 + 2 * width)
            .append("update ")
            .append(table)
            // By primary key whatever the optimizer thinks of a small table: a scan would wait on
            // any row an application holds locked, not only on ours.
            .append(" force index (PRIMARY) set ")
            .append(change.set())
            .append(" where ")
            .append(AckSql.guard(width, "?"))
            .append(change.also());
    List<Object> values = new ArrayList<>(change.values().size() + width + 4);
    values.addAll(change.values());
    values.addAll(ids);
    values.addAll(Collections.nCopies(width - ids.size(), ids.get(ids.size() - 1)));
    values.add(sv(from));
    values.add(epoch);
    if (fence != null) {
      sb.append(Fence.SQL);
      values.add(fence.shard());
      values.add(fence.token());
    }
    return new Sql(sb.toString(), values);
  }

  /**
   * After a fenced write changed fewer rows than it had to: reads the fence row on {@code c} (in
   * its transaction, if it has one) and returns the exception to throw when the lease is another's
   * now, or null when it is still ours (or the writes are unfenced).
   */
  FencedOffException fencedOff(Connection c) throws SQLException {
    if (fence == null) {
      return null;
    }
    try (PreparedStatement ps = c.prepareStatement(Fence.CHECK_SQL)) {
      ps.setString(1, fence.shard());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? fence.refused(q.name(), rs.getLong(1), rs.getString(2))
            : fence.refused(q.name(), null, null);
      }
    }
  }

  /** The same on a connection of its own. */
  FencedOffException fencedOff() {
    if (fence == null) {
      return null;
    }
    try (Connection c = ds.getConnection()) {
      return fencedOff(c);
    } catch (SQLException e) {
      throw new DataAccessException(q.name() + ": fence read failed: " + e.getMessage(), e);
    }
  }

  /** Reads the current row of a {@link #read}. */
  interface RowReader {
    void row(ResultSet rs) throws SQLException;
  }

  /**
   * Runs a read on a pooled connection and gives each row to {@code each}: plain JDBC, for the
   * statements long enough that rendering them through jOOQ's plain-SQL templates cost the poller's
   * thread more than the read itself (an ordered queue's key checks).
   */
  void read(Sql sql, RowReader each) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql.text())) {
      bind(ps, sql.values());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          each.row(rs);
        }
      }
    } catch (SQLException e) {
      throw new org.jooq.exception.DataAccessException(
          q.name() + ": read failed: " + e.getMessage(), e);
    }
  }

  static void bind(PreparedStatement ps, List<Object> values) throws SQLException {
    for (int i = 0; i < values.size(); i++) {
      Object v = values.get(i);
      if (v instanceof Long l) {
        ps.setLong(i + 1, l);
      } else if (v instanceof Integer n) {
        ps.setInt(i + 1, n);
      } else {
        ps.setObject(i + 1, v);
      }
    }
  }
}
