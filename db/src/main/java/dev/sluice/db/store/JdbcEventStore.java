package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.*;

import dev.sluice.db.EventState;
import dev.sluice.db.Jooq;
import dev.sluice.db.QueueTable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jooq.CaseValueStep;
import org.jooq.CaseWhenStep;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.DataType;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record2;
import org.jooq.Record3;
import org.jooq.ResultQuery;
import org.jooq.Table;
import org.jooq.conf.ParamType;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The {@link EventStore} of one queue table, on jOOQ over a pooled DataSource.
 *
 * <p>Compare-and-set: a batch is changed optimistically in one transaction, one UPDATE per distinct
 * expected epoch ({@code WHERE id IN (...) AND state = ? AND epoch = ?}). When every row matched,
 * it commits: the common case costs one statement and a commit. When some did not (a row acked,
 * cancelled or changed by another manager meanwhile), the transaction is rolled back and the batch
 * is redone under row locks ({@code SELECT ... FOR UPDATE}) so the outcome of every event is known
 * exactly — never guessed from a row count. The same guard serves DELETEs (purging dead events).
 *
 * <p>Fencing: a leader's store ends each of its own writes with its {@link Fence}'s condition.
 * Checking costs nothing on the common path, nor for stale or unknown events: only when a row that
 * a write had to change is found (locked, or read back) still as the write required does the store
 * read the fence row, once, and throw {@link FencedOffException} when the lease is another's.
 */
public final class JdbcEventStore implements EventStore {
  private final DSLContext ctx;
  private final QueueTable q;
  private final Table<Record> t;
  private final Field<Long> id = DSL.field(DSL.name(ID), SQLDataType.BIGINT);
  private final Field<Long> timeNext = DSL.field(DSL.name(TIME_NEXT), SQLDataType.BIGINT);
  private final Field<Long> epoch = DSL.field(DSL.name(EPOCH), SQLDataType.BIGINT);
  private final Field<Long> timeAcked = DSL.field(DSL.name(TIME_ACKED), SQLDataType.BIGINT);
  private final Field<String> tenant = DSL.field(DSL.name(TENANT), SQLDataType.VARCHAR);
  private final Field<Object> state;
  private final HotSql hot;
  private final FireTransaction fireTx;

  /** An ordered queue's key reads; null for an unordered queue. */
  private final KeyReads keyReads;

  private volatile BadRowListener badRows = BadRowListener.NONE;

  /** The leader's fence (null: an unfenced store) and its condition ({@code noCondition}). */
  private final Fence fence;

  private final Condition fenced;

  /**
   * An unfenced store: for writes that are not a shard leader's — acks that arrive at a manager
   * that no longer dispatches the queue (each is a CAS on the epoch the receiver was given, right
   * wherever it applies), operators' commands, tools and tests.
   */
  public JdbcEventStore(DataSource dataSource, QueueTable queue) {
    this(dataSource, queue, null);
  }

  /**
   * A leader's store: every write it makes on its own (fire, ack, release, mark dead, purge) is
   * conditioned on {@code fence}, and one refused throws {@link FencedOffException}. Operators'
   * commands through it ({@link #cancel}, {@link #replayDead}, {@link #purgeDead}) stay unfenced.
   */
  public JdbcEventStore(DataSource dataSource, QueueTable queue, Fence fence) {
    this.ctx = Jooq.context(dataSource);
    this.q = queue;
    this.t = DSL.table(DSL.name(queue.name()));
    this.state = stateField(queue);
    this.fence = fence;
    this.fenced =
        fence == null
            ? DSL.noCondition()
            : DSL.condition(Fence.EXISTS, fence.shard(), fence.token());
    this.hot = new HotSql(dataSource, queue, fence);
    this.fireTx = new FireTransaction(dataSource, queue, hot);
    this.keyReads = hot.ordered() ? new KeyReads(ctx, queue, hot) : null;
  }

  /** The fence this store's writes are conditioned on, or null. */
  public Fence fence() {
    return fence;
  }

  /** Throws when the fence refuses this store's writes now (read after a short write). */
  private void checkFence(DSLContext on) {
    if (fence != null) {
      FencedOffException e = on.connectionResult(hot::fencedOff);
      if (e != null) {
        throw e;
      }
    }
  }

  /**
   * The state column, typed so that an integer column is always read as a number: Connector/J maps
   * {@code TINYINT(1)} (and {@code BOOLEAN}) to a Boolean by default, which would read a hand-set
   * state 9 as {@code true}. Read with {@code getInt}, the value is what the column holds.
   */
  @SuppressWarnings("unchecked")
  private static Field<Object> stateField(QueueTable q) {
    DataType<?> type = q.stateIsEnum() ? SQLDataType.VARCHAR : SQLDataType.INTEGER;
    return (Field<Object>) DSL.field(DSL.name(STATE), type);
  }

  @Override
  public String queue() {
    return q.name();
  }

  @Override
  public void onBadRow(BadRowListener listener) {
    this.badRows = listener == null ? BadRowListener.NONE : listener;
  }

  /** The state of a row read back, telling the listener when it is none of Sluice's. */
  private EventState stateOf(long rowId, Object value) {
    EventState s = q.decodeState(value);
    if (s == null) {
      badRows.badRow(rowId, "unknown_state", "state " + value + " is none of Sluice's: skipped");
    }
    return s;
  }

  private Object sv(EventState s) {
    return q.stateValue(s);
  }

  /** The poll query with its values inlined, for {@code EXPLAIN} in tests and the CLI. */
  public String pollSql(long dueBeforeNs, int limit) {
    return hot.poll(dueBeforeNs, limit).inlined();
  }

  /**
   * The ack compare-and-set with its values inlined (fenced when this store is), for {@code
   * EXPLAIN}: the same text as every fenced CAS but for its SET.
   */
  public String ackSql(List<Long> ids, long epoch, long nowNs) {
    return hot.casSql(hot.ack(nowNs), ids, EventState.FIRED, epoch).inlined();
  }

  @Override
  public List<EventRow> pollPending(long dueBeforeNs, int limit) {
    return poll(hot.poll(dueBeforeNs, limit));
  }

  /**
   * A poll: rows the driver cannot read are made dead with the reason (naming the column and the
   * error) and told to the listener; the others are returned. Such a row would otherwise fail every
   * poll of the queue, for good.
   */
  private List<EventRow> poll(HotSql.Sql sql) {
    Map<EventRef, String> unreadable = new LinkedHashMap<>();
    List<OutOfRangeRow> outOfRange = new ArrayList<>();
    List<EventRow> rows = hot.query(sql, unreadable, outOfRange);
    if (keyReads != null) {
      rows = keyReads.placed(rows);
    }
    outOfRange.forEach(this::markOutOfRangeDead);
    if (!unreadable.isEmpty()) {
      Map<EventRef, CasOutcome> out = markDead(unreadable);
      unreadable.forEach(
          (ref, why) -> {
            if (out.get(ref) == CasOutcome.APPLIED) {
              badRows.badRow(ref.id(), "unreadable_row", why + "; made dead");
            }
          });
    }
    return rows;
  }

  /**
   * Makes a pending row that cannot be named by a long (its id or epoch above 2^63 - 1) dead, with
   * its reason, and tells the listener; a row that changed meanwhile is left as it is.
   */
  private void markOutOfRangeDead(OutOfRangeRow row) {
    HotSql.Sql sql = hot.deadByDecimal(row.id(), row.epoch());
    boolean applied =
        ctx.transactionResult(
            cfg -> {
              DSLContext tx = DSL.using(cfg);
              if (tx.execute(sql.text(), sql.values().toArray()) == 0) {
                checkFence(tx); // changed meanwhile, or the lease is another's
                return false;
              }
              DeadReasons.record(
                  tx,
                  q.name(),
                  Map.of(new EventRef(row.wrappedId(), row.wrappedEpoch()), row.reason()));
              return true;
            });
    if (applied) {
      badRows.badRow(row.wrappedId(), "id_out_of_range", row.reason() + "; made dead");
    }
  }

  /**
   * Dead rows whose id is above 2^63 - 1 (a {@code BIGINT UNSIGNED} id column), which {@link
   * #listDead} cannot return, with their recorded reasons; empty for a signed id column.
   */
  public List<OutOfRangeRow> deadOutOfRange(int limit) {
    if (!hot.unsignedId()) {
      return List.of();
    }
    HotSql.Sql sql = hot.deadOutOfRange(limit);
    List<OutOfRangeRow> rows = new ArrayList<>();
    for (Record r : ctx.fetch(sql.text(), sql.values().toArray())) {
      rows.add(new OutOfRangeRow(r.get(0, String.class), r.get(1, String.class), null));
    }
    List<Long> ids = new ArrayList<>();
    rows.forEach(r -> ids.add(r.wrappedId()));
    Map<Long, String> why = DeadReasons.read(ctx, q.name(), ids);
    List<OutOfRangeRow> out = new ArrayList<>(rows.size());
    rows.forEach(r -> out.add(new OutOfRangeRow(r.id(), r.epoch(), why.get(r.wrappedId()))));
    return out;
  }

  /** The continuation poll with its values inlined, for {@code EXPLAIN}. */
  public String pollAfterSql(long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return hot.pollAfter(dueBeforeNs, afterTimeNextNs, afterId, limit).inlined();
  }

  @Override
  public List<EventRow> pollPendingAfter(
      long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return poll(hot.pollAfter(dueBeforeNs, afterTimeNextNs, afterId, limit));
  }

  @Override
  public List<EventRow> pollTenants(List<TenantRead> reads, long dueBeforeNs) {
    return reads.isEmpty() ? List.of() : poll(hot.pollTenants(reads, dueBeforeNs));
  }

  /**
   * The several-tenant poll with its values inlined, for {@code EXPLAIN}: one statement, a UNION
   * ALL of each tenant's read on the (state, tenant, time_next) index.
   */
  public String pollTenantsSql(List<TenantRead> reads, long dueBeforeNs) {
    return hot.pollTenants(reads, dueBeforeNs).inlined();
  }

  private ResultQuery<Record2<String, Long>> pendingTenantsQuery(int limit) {
    return pendingTenantsQuery(null, limit);
  }

  private ResultQuery<Record2<String, Long>> pendingTenantsQuery(String after, int limit) {
    Condition where = state.eq(sv(EventState.PENDING));
    if (after != null) {
      where = where.and(tenant.gt(after)); // still a range on (state, tenant): a loose scan
    }
    return ctx.select(tenant, DSL.min(timeNext))
        .from(t)
        .where(where)
        // By the index's leading (state, tenant), not by tenant alone: only so do MariaDB and
        // MySQL read it by a loose index scan instead of every pending row.
        .groupBy(state, tenant)
        .orderBy(state, tenant)
        .limit(limit);
  }

  /** The SQL of {@link #pendingTenants}, with its values inlined (for EXPLAIN in tests). */
  public String pendingTenantsSql(int limit) {
    return pendingTenantsQuery(limit).getSQL(ParamType.INLINED);
  }

  /** The SQL of {@link #pendingTenantsAfter}, with its values inlined (for EXPLAIN in tests). */
  public String pendingTenantsAfterSql(String after, int limit) {
    return pendingTenantsQuery(after, limit).getSQL(ParamType.INLINED);
  }

  @Override
  public List<TenantDue> pendingTenants(int limit) {
    return pendingTenantsAfter(null, limit);
  }

  @Override
  public List<TenantDue> pendingTenantsAfter(String after, int limit) {
    List<TenantDue> out = new ArrayList<>();
    for (Record r : pendingTenantsQuery(after, limit).fetch()) {
      out.add(new TenantDue(r.get(0, String.class), r.get(1, Long.class)));
    }
    return out;
  }

  @Override
  public Map<EventRef, CasOutcome> fire(Collection<EventRef> refs, long deadlineNs) {
    // Ours when it is fired at the next epoch with exactly our deadline (ns).
    return casMarked(
        refs,
        EventState.PENDING,
        hot.fire(deadlineNs),
        (ref, st, ep, tn, ta) ->
            st == EventState.FIRED && ep == ref.epoch() + 1 && tn == deadlineNs);
  }

  @Override
  public FireResult fireAsPolled(List<FireRef> refs, java.util.function.LongSupplier deadlineNs) {
    if (refs.isEmpty()) {
      return new FireResult(0, Map.of(), Set.of(), Set.of(), Set.of());
    }
    return fireTx.fire(refs, deadlineNs, badRows);
  }

  @Override
  public Map<EventRef, CasOutcome> ack(Collection<EventRef> refs, long nowNs) {
    return casMarked(
        refs,
        EventState.FIRED,
        hot.ack(nowNs),
        (ref, st, ep, tn, ta) ->
            st == EventState.ACKED && ep == ref.epoch() && ta != null && ta == nowNs);
  }

  @Override
  public Map<EventRef, CasOutcome> release(Collection<Release> releases) {
    Map<EventRef, CasOutcome> out = new HashMap<>();
    List<EventRef> dead = new ArrayList<>();
    Map<Long, Long> retryAt = new HashMap<>();
    List<EventRef> retry = new ArrayList<>();
    List<EventRef> unsent = new ArrayList<>();
    Map<Long, EventRef> deadRefs = new HashMap<>();
    Map<Long, String> deadReason = new HashMap<>();
    for (Release r : releases) {
      if (r.unsent() && r.ref().epoch() > 0) {
        unsent.add(r.ref());
        retryAt.put(r.ref().id(), r.retryAtNs());
      } else if (r.dead()) {
        dead.add(r.ref());
        deadRefs.put(r.ref().id(), r.ref());
        deadReason.put(r.ref().id(), r.reason() == null ? "attempts used up" : r.reason());
      } else {
        retry.add(r.ref());
        retryAt.put(r.ref().id(), r.retryAtNs());
      }
    }
    out.putAll(
        cas(
            dead,
            EventState.FIRED,
            true,
            (tx, ids, guard) -> {
              int n = tx.update(t).set(state, sv(EventState.DEAD)).where(guard).execute();
              Map<EventRef, String> why = new LinkedHashMap<>();
              for (Long i : ids) {
                why.put(deadRefs.get(i), deadReason.get(i));
              }
              DeadReasons.record(tx, q.name(), why);
              return n;
            }));
    out.putAll(
        cas(
            retry,
            EventState.FIRED,
            true,
            ids -> {
              CaseValueStep<Long> choose = DSL.choose(id);
              CaseWhenStep<Long, Long> when = null;
              for (Long i : ids) {
                when =
                    when == null
                        ? choose.when(DSL.val(i), DSL.val(retryAt.get(i)))
                        : when.when(DSL.val(i), DSL.val(retryAt.get(i)));
              }
              Map<Field<?>, Object> set = new LinkedHashMap<>();
              set.put(state, sv(EventState.PENDING));
              set.put(timeNext, when.otherwise(timeNext));
              return set;
            }));
    // Never sent: the fire is undone (fired at e + 1 -> pending at e). No delivery of attempt e + 1
    // exists, so no answer to it can come, and the next fire is e + 1 again.
    out.putAll(
        cas(
            unsent,
            EventState.FIRED,
            true,
            ids -> {
              Map<Field<?>, Object> set = new LinkedHashMap<>();
              set.put(state, sv(EventState.PENDING));
              set.put(epoch, epoch.minus(1));
              set.put(timeNext, dueAt(ids, retryAt));
              return set;
            }));
    return out;
  }

  /** {@code time_next} per id, as a CASE on the id. */
  private Field<Long> dueAt(List<Long> ids, Map<Long, Long> at) {
    CaseValueStep<Long> choose = DSL.choose(id);
    CaseWhenStep<Long, Long> when = null;
    for (Long i : ids) {
      when =
          when == null
              ? choose.when(DSL.val(i), DSL.val(at.get(i)))
              : when.when(DSL.val(i), DSL.val(at.get(i)));
    }
    return when.otherwise(timeNext);
  }

  @Override
  public List<EventRef> expiredFired(long beforeNs, int limit) {
    return ctx.select(id, epoch)
        .from(t)
        .where(state.eq(sv(EventState.FIRED)).and(timeNext.le(beforeNs)))
        .orderBy(timeNext, id)
        .limit(limit)
        .fetch(r -> new EventRef(r.value1(), r.value2()));
  }

  @Override
  public Map<Long, CasOutcome> cancel(
      Collection<Long> ids, long nowNs, java.util.function.Predicate<String> tenantAllowed) {
    Map<Long, CasOutcome> out = new LinkedHashMap<>();
    if (ids.isEmpty()) {
      return out;
    }
    Map<Long, org.jooq.Record4<Long, Long, Object, String>> rows = new HashMap<>();
    for (org.jooq.Record4<Long, Long, Object, String> r :
        ctx.select(id, epoch, state, tenant).from(t).where(id.in(ids)).fetch()) {
      rows.put(r.value1(), r);
    }
    List<EventRef> pending = new ArrayList<>();
    for (Long i : ids) {
      org.jooq.Record4<Long, Long, Object, String> r = rows.get(i);
      // Another tenant's event is answered as one that does not exist: the answer leaks nothing.
      if (r == null || !tenantAllowed.test(r.value4() == null ? "" : r.value4())) {
        out.put(i, CasOutcome.UNKNOWN);
      } else if (stateOf(i, r.value3()) != EventState.PENDING) {
        out.put(i, CasOutcome.STALE);
      } else {
        pending.add(new EventRef(i, r.value2()));
      }
    }
    // An operator's command: unfenced (it is right whoever leads, by its CAS on the epoch).
    cas(
            pending,
            EventState.PENDING,
            false,
            x -> {
              Map<Field<?>, Object> set = new LinkedHashMap<>();
              set.put(state, sv(EventState.CANCELLED));
              set.put(timeAcked, nowNs);
              set.put(timeNext, nowNs);
              return set;
            })
        .forEach((ref, o) -> out.put(ref.id(), o));
    Map<Long, CasOutcome> inOrder = new LinkedHashMap<>();
    for (Long i : ids) {
      inOrder.put(i, out.get(i));
    }
    return inOrder;
  }

  @Override
  public int purge(long beforeNs, int limit) {
    // Fenced, not checked: a purge that deletes nothing is common; the leader's other writes find
    // out that the lease is gone.
    return ctx.deleteFrom(t)
        .where(state.in(sv(EventState.ACKED), sv(EventState.CANCELLED)).and(timeNext.lt(beforeNs)))
        .and(fenced)
        .orderBy(timeNext)
        .limit(limit)
        .execute();
  }

  @Override
  public int purgeUnkeyed(long fromNs, long beforeNs, int limit) {
    return ctx.deleteFrom(t)
        .where(state.in(sv(EventState.ACKED), sv(EventState.CANCELLED)))
        .and(timeNext.ge(fromNs))
        .and(timeNext.lt(beforeNs))
        .and(DSL.field(DSL.name(DEDUP_KEY)).isNull())
        .and(fenced)
        .orderBy(timeNext)
        .limit(limit)
        .execute();
  }

  @Override
  public StateCounts counts() {
    long[] n = new long[EventState.values().length + 1];
    for (Record r : ctx.select(state, DSL.count()).from(t).groupBy(state).fetch()) {
      EventState s = q.decodeState(r.get(0));
      n[s == null ? n.length - 1 : s.ordinal()] += r.get(1, Long.class);
    }
    return new StateCounts(n[0], n[1], n[2], n[3], n[4], oldestPendingDueNs().orElse(0), n[5]);
  }

  @Override
  public java.util.OptionalLong oldestPendingDueNs() {
    Long oldest =
        ctx.select(DSL.min(timeNext))
            .from(t)
            .where(state.eq(sv(EventState.PENDING)))
            .fetchOne(0, Long.class);
    return oldest == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(oldest);
  }

  @Override
  public List<TenantCounts> countsByTenant(int limit) {
    Map<String, long[]> by = new HashMap<>();
    for (Record r :
        ctx.select(tenant, state, DSL.count(), DSL.min(timeNext))
            .from(t)
            .groupBy(tenant, state)
            .fetch()) {
      String ten = r.get(0, String.class);
      long[] n = by.computeIfAbsent(ten == null ? "" : ten, k -> new long[7]);
      EventState s = q.decodeState(r.get(1));
      n[s == null ? 6 : s.ordinal()] += r.get(2, Long.class);
      if (s == EventState.PENDING) {
        n[5] = r.get(3, Long.class);
      }
    }
    List<TenantCounts> out = new ArrayList<>();
    by.forEach(
        (ten, n) ->
            out.add(
                new TenantCounts(ten, new StateCounts(n[0], n[1], n[2], n[3], n[4], n[5], n[6]))));
    out.sort(
        java.util.Comparator.comparingLong(TenantCounts::open)
            .reversed()
            .thenComparing(TenantCounts::tenant));
    return out.size() > limit ? List.copyOf(out.subList(0, limit)) : out;
  }

  @Override
  public Map<Long, Long> epochs(Collection<Long> ids) {
    Map<Long, Long> out = new HashMap<>();
    if (!ids.isEmpty()) {
      ctx.select(id, epoch)
          .from(t)
          .where(id.in(ids))
          .fetch()
          .forEach(r -> out.put(r.value1(), r.value2()));
    }
    return out;
  }

  @Override
  public List<EventRow> listDead(long afterId, int limit) {
    return hot.query(hot.dead(afterId, limit));
  }

  @Override
  public Map<EventRef, CasOutcome> replayDead(Collection<EventRef> refs) {
    Field<Long> dbNow = DSL.field(NOW_NS_SQL, SQLDataType.BIGINT);
    // An operator's command: unfenced.
    return cas(
        refs,
        EventState.DEAD,
        false,
        (tx, ids, guard) -> {
          int n =
              tx.update(t)
                  .set(state, sv(EventState.PENDING))
                  .set(timeNext, dbNow)
                  .where(guard)
                  .execute();
          DeadReasons.remove(tx, q.name(), ids);
          return n;
        });
  }

  @Override
  public java.util.Optional<Found> find(long rowId) {
    List<EventRow> rows = hot.query(hot.byId(rowId));
    if (rows.isEmpty()) {
      return java.util.Optional.empty();
    }
    // Read apart from the row: a change in between shows the newer state (operators only).
    Object st = ctx.select(state).from(t).where(id.eq(rowId)).fetchOne(state);
    return st == null
        ? java.util.Optional.empty()
        : java.util.Optional.of(new Found(stateOf(rowId, st), rows.get(0)));
  }

  @Override
  public Map<EventRef, CasOutcome> purgeDead(Collection<EventRef> refs) {
    // An operator's command: unfenced.
    return cas(
        refs,
        EventState.DEAD,
        false,
        (tx, ids, guard) -> {
          int n = tx.deleteFrom(t).where(guard).execute();
          DeadReasons.remove(tx, q.name(), ids);
          return n;
        });
  }

  @Override
  public Map<EventRef, CasOutcome> markDead(Map<EventRef, String> reasons) {
    if (reasons.isEmpty()) {
      return Map.of();
    }
    Set<Long> ids = new HashSet<>();
    for (EventRef r : reasons.keySet()) {
      ids.add(r.id());
    }
    // Under row locks, so that each outcome is known exactly; pending and fired rows alike.
    return ctx.transactionResult(
        cfg -> {
          DSLContext tx = DSL.using(cfg);
          Map<Long, Record3<Long, Long, Object>> rows = new HashMap<>();
          for (Record3<Long, Long, Object> r :
              tx.select(id, epoch, state).from(t).where(id.in(ids)).forUpdate().fetch()) {
            rows.put(r.value1(), r);
          }
          Map<EventRef, CasOutcome> out = new HashMap<>();
          Map<EventRef, String> dying = new LinkedHashMap<>();
          Set<Long> taken = new HashSet<>();
          for (Map.Entry<EventRef, String> e : reasons.entrySet()) {
            EventRef r = e.getKey();
            Record3<Long, Long, Object> row = rows.get(r.id());
            EventState st = row == null ? null : stateOf(r.id(), row.value3());
            if (row == null) {
              out.put(r, CasOutcome.UNKNOWN);
            } else if ((st == EventState.PENDING || st == EventState.FIRED)
                && row.value2() == r.epoch()
                && taken.add(r.id())) {
              dying.put(r, e.getValue());
              out.put(r, CasOutcome.APPLIED);
            } else {
              out.put(r, CasOutcome.STALE);
            }
          }
          int n = 0;
          for (Map.Entry<Long, List<Long>> g : byEpoch(dying.keySet()).entrySet()) {
            n +=
                tx.update(t)
                    .set(state, sv(EventState.DEAD))
                    .where(id.in(g.getValue()))
                    .and(epoch.eq(g.getKey()))
                    .and(state.in(sv(EventState.PENDING), sv(EventState.FIRED)))
                    .and(fenced)
                    .execute();
          }
          if (n < dying.size()) {
            checkFence(tx); // the rows are locked and matched: only the fence refuses them
          }
          DeadReasons.record(tx, q.name(), dying);
          return out;
        });
  }

  @Override
  public Map<Long, String> deadReasons(Collection<Long> ids) {
    return DeadReasons.read(ctx, q.name(), ids);
  }

  @Override
  public long serverTimeNs() {
    return ctx.fetchValue("SELECT " + NOW_NS_SQL) instanceof Number n ? n.longValue() : 0L;
  }

  // ---------------------------------------------------------------- compare-and-set

  /** Thrown inside the optimistic transaction to roll it back when not every row matched. */
  private static final class PartialMatch extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PartialMatch() {
      super(null, null, false, false);
    }
  }

  /** Whether a row read back after a marked change shows that change. */
  @FunctionalInterface
  private interface Mark {
    boolean ours(EventRef ref, EventState st, long epoch, long timeNext, Long timeAcked);
  }

  /**
   * The hot-path compare-and-set (fire and ack): one autocommit UPDATE per expected epoch — a
   * single round trip, with no transaction to open and close. When every row matched, all applied.
   * When some did not, the rows are read back and each is judged by the change's mark: the exact
   * nanosecond value this call wrote (deadline or ack time). Another writer producing the same
   * state, epoch and nanosecond for the same row would have to fire or ack the same attempt
   * concurrently, which the epoch guard itself forbids.
   */
  private Map<EventRef, CasOutcome> casMarked(
      Collection<EventRef> refs, EventState from, HotSql.Change change, Mark mark) {
    if (refs.isEmpty()) {
      return Map.of();
    }
    Map<Long, List<Long>> byEpoch = byEpoch(refs);
    int n = 0;
    for (Map.Entry<Long, List<Long>> e : byEpoch.entrySet()) {
      n += hot.update(change, e.getValue(), from, e.getKey());
    }
    Map<EventRef, CasOutcome> out = new HashMap<>();
    if (n == refs.size()) {
      for (EventRef r : refs) {
        out.put(r, CasOutcome.APPLIED);
      }
      return out;
    }
    Set<Long> ids = new HashSet<>();
    for (EventRef r : refs) {
      ids.add(r.id());
    }
    Map<Long, Record> rows = new HashMap<>();
    for (Record r :
        ctx.select(id, state, epoch, timeNext, timeAcked).from(t).where(id.in(ids)).fetch()) {
      rows.put(r.get(id), r);
    }
    boolean refused = false;
    for (EventRef ref : refs) {
      Record r = rows.get(ref.id());
      if (r == null) {
        out.put(ref, CasOutcome.UNKNOWN);
      } else {
        EventState st = stateOf(ref.id(), r.get(state));
        boolean ours =
            st != null && mark.ours(ref, st, r.get(epoch), r.get(timeNext), r.get(timeAcked));
        out.put(ref, ours ? CasOutcome.APPLIED : CasOutcome.STALE);
        // Still as the UPDATE required, yet not changed: only the fence refuses such a row.
        refused |= !ours && st == from && r.get(epoch) == ref.epoch();
      }
    }
    if (refused) {
      checkFence(ctx);
    }
    return out;
  }

  /** One guarded change of a group of rows that share an expected epoch; returns rows changed. */
  @FunctionalInterface
  private interface Change {
    int apply(DSLContext tx, List<Long> ids, Condition guard);
  }

  private Map<EventRef, CasOutcome> cas(
      Collection<EventRef> refs,
      EventState from,
      boolean fenced,
      Function<List<Long>, Map<Field<?>, Object>> setFor) {
    return cas(
        refs,
        from,
        fenced,
        (tx, ids, guard) -> tx.update(t).set(setFor.apply(ids)).where(guard).execute());
  }

  /**
   * {@code fenced}: a leader's own write, conditioned on its {@link Fence} (when the store has
   * one); false for operators' commands.
   */
  private Map<EventRef, CasOutcome> cas(
      Collection<EventRef> refs, EventState from, boolean fenced, Change change) {
    if (refs.isEmpty()) {
      return Map.of();
    }
    Map<Long, List<Long>> byEpoch = byEpoch(refs);
    try {
      return ctx.transactionResult(
          cfg -> {
            DSLContext tx = DSL.using(cfg);
            int n = update(tx, byEpoch, from, fenced, change);
            if (n != refs.size()) {
              throw new PartialMatch();
            }
            Map<EventRef, CasOutcome> all = new HashMap<>();
            for (EventRef r : refs) {
              all.put(r, CasOutcome.APPLIED);
            }
            return all;
          });
    } catch (PartialMatch e) {
      return casLocked(refs, from, fenced, change);
    }
  }

  /** The exact path: lock the rows, decide per event, change only those that match. */
  private Map<EventRef, CasOutcome> casLocked(
      Collection<EventRef> refs, EventState from, boolean fenced, Change change) {
    Set<Long> ids = new HashSet<>();
    for (EventRef r : refs) {
      ids.add(r.id());
    }
    return ctx.transactionResult(
        cfg -> {
          DSLContext tx = DSL.using(cfg);
          Map<Long, Record3<Long, Long, Object>> rows = new HashMap<>();
          for (Record3<Long, Long, Object> r :
              tx.select(id, epoch, state).from(t).where(id.in(ids)).forUpdate().fetch()) {
            rows.put(r.value1(), r);
          }
          Map<EventRef, CasOutcome> out = new HashMap<>();
          List<EventRef> eligible = new ArrayList<>();
          Set<Long> taken = new HashSet<>();
          for (EventRef r : refs) {
            Record3<Long, Long, Object> row = rows.get(r.id());
            if (row == null) {
              out.put(r, CasOutcome.UNKNOWN);
            } else if (stateOf(r.id(), row.value3()) == from
                && row.value2() == r.epoch()
                && taken.add(r.id())) {
              eligible.add(r);
              out.put(r, CasOutcome.APPLIED);
            } else {
              out.put(r, CasOutcome.STALE);
            }
          }
          if (!eligible.isEmpty()
              && update(tx, byEpoch(eligible), from, fenced, change) < eligible.size()
              && fenced) {
            checkFence(tx); // the rows are locked and matched: only the fence refuses them
          }
          return out;
        });
  }

  private int update(
      DSLContext tx,
      Map<Long, List<Long>> byEpoch,
      EventState from,
      boolean fenced,
      Change change) {
    int n = 0;
    for (Map.Entry<Long, List<Long>> e : byEpoch.entrySet()) {
      List<Long> ids = e.getValue();
      Condition guard = id.in(ids).and(state.eq(sv(from))).and(epoch.eq(e.getKey()));
      n += change.apply(tx, ids, fenced ? guard.and(this.fenced) : guard);
    }
    return n;
  }

  private static Map<Long, List<Long>> byEpoch(Collection<EventRef> refs) {
    Map<Long, List<Long>> m = new LinkedHashMap<>();
    for (EventRef r : refs) {
      m.computeIfAbsent(r.epoch(), k -> new ArrayList<>()).add(r.id());
    }
    return m;
  }

  /** User column values as the wire carries them: null, Long, Double, String or byte[]. */
  static Object plain(Object v) {
    if (v == null || v instanceof Long || v instanceof String || v instanceof byte[]) {
      return v;
    }
    if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    if (v instanceof BigInteger b) {
      // BIGINT UNSIGNED: as a number while it fits one (a receiver's getLong keeps working), as its
      // exact decimal text above 2^63 - 1 (a long would arrive negative).
      return b.bitLength() < 64 ? (Object) b.longValue() : b.toString();
    }
    if (v instanceof Double || v instanceof Float) {
      return ((Number) v).doubleValue();
    }
    if (v instanceof BigDecimal d) {
      return d.toPlainString();
    }
    if (v instanceof Boolean b) {
      return b ? 1L : 0L;
    }
    return v.toString();
  }

  // ---------------------------------------------------------------- ordered queues

  @Override
  public Map<EventRef, CasOutcome> hold(Collection<EventRef> refs) {
    return shiftHeld(refs, true, true);
  }

  @Override
  public Map<EventRef, CasOutcome> unhold(Collection<EventRef> refs) {
    return shiftHeld(refs, false, true);
  }

  /**
   * Holds ({@code time_next + HELD_NS}, rows not held yet) or releases ({@code - HELD_NS}, held
   * rows) pending rows, a compare-and-set on the epoch; {@code fenced}: the leader's own write.
   */
  private Map<EventRef, CasOutcome> shiftHeld(
      Collection<EventRef> refs, boolean hold, boolean fenced) {
    return cas(
        refs,
        EventState.PENDING,
        fenced,
        (tx, ids, guard) ->
            tx.update(t)
                .set(timeNext, hold ? timeNext.plus(HELD_NS) : timeNext.minus(HELD_NS))
                .where(guard.and(hold ? timeNext.lt(HELD_NS) : timeNext.ge(HELD_NS)))
                .execute());
  }

  @Override
  public List<EventRow> firstPendingOfKeys(Collection<Object> keys) {
    if (keyReads == null || (keys.isEmpty() && q.orderingColumn() != null)) {
      return List.of();
    }
    List<Object> normal = new ArrayList<>(keys.size());
    keys.forEach(k -> normal.add(OrderingKeys.normal(k)));
    return keyReads.firstPending(normal);
  }

  @Override
  public List<Object> heldKeys(int limit) {
    return keyReads == null ? List.of() : keyReads.heldKeys(limit);
  }

  @Override
  public int unholdAll(int limit) {
    return ctx.update(t)
        .set(timeNext, timeNext.minus(HELD_NS))
        .where(state.eq(sv(EventState.PENDING)).and(timeNext.ge(HELD_NS)))
        // A completion event waits for its group, not behind a key: it stays held.
        .and(
            q.completesGroups()
                ? DSL.field(DSL.name(dev.sluice.client.QueueColumns.COMPLETES_GROUP)).isNull()
                : DSL.noCondition())
        .and(fenced)
        .limit(limit)
        .execute();
  }

  @Override
  public List<HaltedKey> haltedKeys(int limit) {
    if (keyReads == null || !q.options().haltOnDead()) {
      return List.of();
    }
    return keyReads.halted(limit, true);
  }

  @Override
  public int haltedKeyCount(int limit) {
    if (keyReads == null || !q.options().haltOnDead()) {
      return 0;
    }
    return keyReads.halted(limit, false).size();
  }

  @Override
  public CasOutcome skipDead(EventRef ref, long nowNs) {
    java.util.Optional<Found> found = find(ref.id());
    // An operator's command: unfenced (its CAS on the epoch makes it right whoever leads).
    CasOutcome out =
        cas(
                List.of(ref),
                EventState.DEAD,
                false,
                (tx, ids, guard) -> {
                  int n =
                      tx.update(t)
                          .set(state, sv(EventState.CANCELLED))
                          .set(timeAcked, nowNs)
                          .set(timeNext, nowNs)
                          .where(guard)
                          .execute();
                  DeadReasons.remove(tx, q.name(), ids);
                  return n;
                })
            .get(ref);
    if (out == CasOutcome.APPLIED && found.isPresent() && keyReads != null) {
      String col = q.orderingColumn();
      Object key = col == null ? null : found.get().row().userColumns().get(col);
      List<Object> keys = new ArrayList<>();
      keys.add(key);
      List<EventRef> turn = new ArrayList<>();
      for (EventRow r : firstPendingOfKeys(col == null ? List.of() : keys)) {
        if (r.held() && !r.waitsForKey()) {
          turn.add(new EventRef(r.id(), r.epoch()));
        }
      }
      shiftHeld(turn, false, false); // an operator's command: unfenced
    }
    return out;
  }
}
