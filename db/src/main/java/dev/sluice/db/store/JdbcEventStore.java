package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.*;

import dev.sluice.db.EventState;
import dev.sluice.db.Jooq;
import dev.sluice.db.QueueConvention;
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
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record3;
import org.jooq.Table;
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
 */
public final class JdbcEventStore implements EventStore {
  private final DSLContext ctx;
  private final QueueTable q;
  private final Table<Record> t;
  private final Field<Long> id = DSL.field(DSL.name(ID), SQLDataType.BIGINT);
  private final Field<Long> timeNext = DSL.field(DSL.name(TIME_NEXT), SQLDataType.BIGINT);
  private final Field<Long> epoch = DSL.field(DSL.name(EPOCH), SQLDataType.BIGINT);
  private final Field<Long> timeCreated = DSL.field(DSL.name(TIME_CREATED), SQLDataType.BIGINT);
  private final Field<Long> timeAcked = DSL.field(DSL.name(TIME_ACKED), SQLDataType.BIGINT);
  private final Field<Integer> priority = DSL.field(DSL.name(PRIORITY), SQLDataType.INTEGER);
  private final Field<String> tenant = DSL.field(DSL.name(TENANT), SQLDataType.VARCHAR);
  private final Field<String> actor = DSL.field(DSL.name(ACTOR), SQLDataType.VARCHAR);
  private final Field<String> workClass = DSL.field(DSL.name(CLASS), SQLDataType.VARCHAR);
  private final Field<Object> state = DSL.field(DSL.name(STATE));
  private final List<Field<?>> pollFields = new ArrayList<>();
  private final int userFrom;

  public JdbcEventStore(DataSource dataSource, QueueTable queue) {
    this.ctx = Jooq.context(dataSource);
    this.q = queue;
    this.t = DSL.table(DSL.name(queue.name()));
    pollFields.addAll(List.of(id, epoch, timeNext, timeCreated, priority, tenant));
    pollFields.add(queue.hasActor() ? actor : DSL.inline((String) null).as(ACTOR));
    pollFields.add(queue.hasClass() ? workClass : DSL.inline((String) null).as(CLASS));
    userFrom = pollFields.size();
    for (String c : queue.userColumns()) {
      pollFields.add(DSL.field(DSL.name(c)));
    }
  }

  @Override
  public String queue() {
    return q.name();
  }

  private Object sv(EventState s) {
    return q.stateValue(s);
  }

  private org.jooq.ResultQuery<Record> pollQuery(long dueBeforeNs, int limit) {
    return ctx.select(pollFields)
        .from(t)
        .where(state.eq(sv(EventState.PENDING)).and(timeNext.le(dueBeforeNs)))
        .orderBy(timeNext, id)
        .limit(limit);
  }

  /** The poll query with its values inlined, for {@code EXPLAIN} in tests and the CLI. */
  public String pollSql(long dueBeforeNs, int limit) {
    return ctx.renderInlined(pollQuery(dueBeforeNs, limit));
  }

  @Override
  public List<EventRow> pollPending(long dueBeforeNs, int limit) {
    return rows(pollQuery(dueBeforeNs, limit));
  }

  private org.jooq.ResultQuery<Record> pollAfterQuery(
      long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return ctx.select(pollFields)
        .from(t)
        .where(
            state
                .eq(sv(EventState.PENDING))
                .and(timeNext.le(dueBeforeNs))
                // The first conjunct makes this a range on (state, time_next); an OR alone is
                // served by the state prefix only, reading every row before the cursor.
                .and(timeNext.ge(afterTimeNextNs))
                .and(timeNext.gt(afterTimeNextNs).or(id.gt(afterId))))
        .orderBy(timeNext, id)
        .limit(limit);
  }

  /** The continuation poll with its values inlined, for {@code EXPLAIN}. */
  public String pollAfterSql(long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return ctx.renderInlined(pollAfterQuery(dueBeforeNs, afterTimeNextNs, afterId, limit));
  }

  @Override
  public List<EventRow> pollPendingAfter(
      long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return rows(pollAfterQuery(dueBeforeNs, afterTimeNextNs, afterId, limit));
  }

  /**
   * One tenant's part of a per-tenant poll. The index is forced: for a tenant that holds most of
   * the table the optimizer would otherwise pick a full scan and a sort, although LIMIT needs only
   * the first rows of the (state, tenant, time_next) range. A read after a position starts the
   * range there, so a tenant topped up round after round reads each row once, not the window's rows
   * again.
   */
  private org.jooq.Select<Record> tenantQuery(TenantRead read, long dueBeforeNs) {
    Condition where =
        state
            .eq(sv(EventState.PENDING))
            .and(tenant.eq(read.tenant()))
            .and(timeNext.le(dueBeforeNs));
    PollPosition after = read.after();
    if (after != null) {
      // As in the continuation poll: the first conjunct keeps it a range on the index.
      where =
          where
              .and(timeNext.ge(after.timeNextNs()))
              .and(timeNext.gt(after.timeNextNs()).or(id.gt(after.id())));
    }
    return ctx.select(pollFields)
        .from(q.hasTenantIndex() ? t.forceIndex(QueueConvention.TENANT_INDEX) : t)
        .where(where)
        .orderBy(timeNext, id)
        .limit(read.limit());
  }

  @Override
  public List<EventRow> pollTenants(List<TenantRead> reads, long dueBeforeNs) {
    return reads.isEmpty() ? List.of() : rows(tenantsQuery(reads, dueBeforeNs));
  }

  /** The several-tenant poll with its values inlined, for {@code EXPLAIN}. */
  public String pollTenantsSql(List<TenantRead> reads, long dueBeforeNs) {
    return ctx.renderInlined(tenantsQuery(reads, dueBeforeNs));
  }

  /**
   * One statement: a UNION ALL of each tenant's own poll (each part an index range on (state,
   * tenant, time_next)), so a per-tenant round costs one round trip whatever the tenant count.
   */
  private org.jooq.Select<Record> tenantsQuery(List<TenantRead> reads, long dueBeforeNs) {
    org.jooq.Select<Record> union = null;
    for (TenantRead read : reads) {
      org.jooq.Select<Record> one = tenantQuery(read, dueBeforeNs);
      union = union == null ? one : union.unionAll(one);
    }
    return union;
  }

  @Override
  public TenantDue nextTenant(String afterTenant) {
    var cond = state.eq(sv(EventState.PENDING));
    if (afterTenant != null) {
      cond = cond.and(tenant.gt(afterTenant));
    }
    Record r =
        ctx.select(tenant, timeNext)
            .from(t)
            .where(cond)
            .orderBy(tenant, timeNext)
            .limit(1)
            .fetchOne();
    return r == null ? null : new TenantDue(r.get(0, String.class), r.get(1, Long.class));
  }

  private List<EventRow> rows(org.jooq.ResultQuery<? extends Record> query) {
    return query.fetch(this::toRow);
  }

  private EventRow toRow(Record r) {
    Map<String, Object> user = new LinkedHashMap<>();
    List<String> names = q.userColumns();
    for (int i = 0; i < names.size(); i++) {
      user.put(names.get(i), plain(r.get(userFrom + i)));
    }
    String ten = r.get(5, String.class);
    return new EventRow(
        r.get(0, Long.class),
        r.get(1, Long.class),
        r.get(2, Long.class),
        r.get(3, Long.class),
        r.get(4, Integer.class),
        ten == null ? "" : ten,
        r.get(6, String.class),
        r.get(7, String.class),
        user);
  }

  @Override
  public Map<EventRef, CasOutcome> fire(Collection<EventRef> refs, long deadlineNs) {
    Map<Field<?>, Object> set = new LinkedHashMap<>();
    set.put(state, sv(EventState.FIRED));
    set.put(epoch, epoch.plus(1));
    set.put(timeNext, deadlineNs);
    // Ours when it is fired at the next epoch with exactly our deadline (ns).
    return casMarked(
        refs,
        EventState.PENDING,
        set,
        (ref, st, ep, tn, ta) ->
            st == EventState.FIRED && ep == ref.epoch() + 1 && tn == deadlineNs);
  }

  @Override
  public Map<EventRef, CasOutcome> ack(Collection<EventRef> refs, long nowNs) {
    Map<Field<?>, Object> set = new LinkedHashMap<>();
    set.put(state, sv(EventState.ACKED));
    set.put(timeAcked, nowNs);
    set.put(timeNext, nowNs);
    return casMarked(
        refs,
        EventState.FIRED,
        set,
        (ref, st, ep, tn, ta) ->
            st == EventState.ACKED && ep == ref.epoch() && ta != null && ta == nowNs);
  }

  @Override
  public Map<EventRef, CasOutcome> release(Collection<Release> releases) {
    Map<EventRef, CasOutcome> out = new HashMap<>();
    List<EventRef> dead = new ArrayList<>();
    Map<Long, Long> retryAt = new HashMap<>();
    List<EventRef> retry = new ArrayList<>();
    for (Release r : releases) {
      if (r.dead()) {
        dead.add(r.ref());
      } else {
        retry.add(r.ref());
        retryAt.put(r.ref().id(), r.retryAtNs());
      }
    }
    out.putAll(
        cas(
            dead,
            EventState.FIRED,
            ids -> {
              Map<Field<?>, Object> set = new LinkedHashMap<>();
              set.put(state, sv(EventState.DEAD));
              return set;
            }));
    out.putAll(
        cas(
            retry,
            EventState.FIRED,
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
    return out;
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
  public Map<Long, CasOutcome> cancel(Collection<Long> ids, long nowNs) {
    Map<Long, CasOutcome> out = new LinkedHashMap<>();
    if (ids.isEmpty()) {
      return out;
    }
    Map<Long, Record3<Long, Long, Object>> rows = new HashMap<>();
    for (Record3<Long, Long, Object> r :
        ctx.select(id, epoch, state).from(t).where(id.in(ids)).fetch()) {
      rows.put(r.value1(), r);
    }
    List<EventRef> pending = new ArrayList<>();
    for (Long i : ids) {
      Record3<Long, Long, Object> r = rows.get(i);
      if (r == null) {
        out.put(i, CasOutcome.UNKNOWN);
      } else if (q.decodeState(r.value3()) != EventState.PENDING) {
        out.put(i, CasOutcome.STALE);
      } else {
        pending.add(new EventRef(i, r.value2()));
      }
    }
    cas(
            pending,
            EventState.PENDING,
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
    return ctx.deleteFrom(t)
        .where(state.in(sv(EventState.ACKED), sv(EventState.CANCELLED)).and(timeNext.lt(beforeNs)))
        .orderBy(timeNext)
        .limit(limit)
        .execute();
  }

  @Override
  public StateCounts counts() {
    long[] n = new long[EventState.values().length];
    for (Record r : ctx.select(state, DSL.count()).from(t).groupBy(state).fetch()) {
      n[q.decodeState(r.get(0)).ordinal()] = r.get(1, Long.class);
    }
    Long oldest =
        ctx.select(DSL.min(timeNext))
            .from(t)
            .where(state.eq(sv(EventState.PENDING)))
            .fetchOne(0, Long.class);
    return new StateCounts(n[0], n[1], n[2], n[3], n[4], oldest == null ? 0 : oldest);
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
      long[] n = by.computeIfAbsent(ten == null ? "" : ten, k -> new long[6]);
      EventState s = q.decodeState(r.get(1));
      n[s.ordinal()] = r.get(2, Long.class);
      if (s == EventState.PENDING) {
        n[5] = r.get(3, Long.class);
      }
    }
    List<TenantCounts> out = new ArrayList<>();
    by.forEach(
        (ten, n) ->
            out.add(new TenantCounts(ten, new StateCounts(n[0], n[1], n[2], n[3], n[4], n[5]))));
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
    return ctx.select(pollFields)
        .from(t)
        .where(state.eq(sv(EventState.DEAD)).and(id.gt(afterId)))
        .orderBy(id)
        .limit(limit)
        .fetch(this::toRow);
  }

  @Override
  public Map<EventRef, CasOutcome> replayDead(Collection<EventRef> refs) {
    Field<Long> dbNow = DSL.field(NOW_NS_SQL, SQLDataType.BIGINT);
    return cas(
        refs,
        EventState.DEAD,
        ids -> {
          Map<Field<?>, Object> set = new LinkedHashMap<>();
          set.put(state, sv(EventState.PENDING));
          set.put(timeNext, dbNow);
          return set;
        });
  }

  @Override
  public Map<EventRef, CasOutcome> purgeDead(Collection<EventRef> refs) {
    return cas(refs, EventState.DEAD, (tx, ids, guard) -> tx.deleteFrom(t).where(guard).execute());
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
      Collection<EventRef> refs, EventState from, Map<Field<?>, Object> set, Mark mark) {
    if (refs.isEmpty()) {
      return Map.of();
    }
    Map<Long, List<Long>> byEpoch = byEpoch(refs);
    int n = 0;
    for (Map.Entry<Long, List<Long>> e : byEpoch.entrySet()) {
      List<Long> ids = e.getValue();
      n +=
          ctx.update(t)
              .set(set)
              .where(id.in(ids).and(state.eq(sv(from))).and(epoch.eq(e.getKey())))
              .execute();
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
    for (EventRef ref : refs) {
      Record r = rows.get(ref.id());
      if (r == null) {
        out.put(ref, CasOutcome.UNKNOWN);
      } else {
        boolean ours =
            mark.ours(
                ref, q.decodeState(r.get(state)), r.get(epoch), r.get(timeNext), r.get(timeAcked));
        out.put(ref, ours ? CasOutcome.APPLIED : CasOutcome.STALE);
      }
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
      Function<List<Long>, Map<Field<?>, Object>> setFor) {
    return cas(
        refs, from, (tx, ids, guard) -> tx.update(t).set(setFor.apply(ids)).where(guard).execute());
  }

  private Map<EventRef, CasOutcome> cas(Collection<EventRef> refs, EventState from, Change change) {
    if (refs.isEmpty()) {
      return Map.of();
    }
    Map<Long, List<Long>> byEpoch = byEpoch(refs);
    try {
      return ctx.transactionResult(
          cfg -> {
            DSLContext tx = DSL.using(cfg);
            int n = update(tx, byEpoch, from, change);
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
      return casLocked(refs, from, change);
    }
  }

  /** The exact path: lock the rows, decide per event, change only those that match. */
  private Map<EventRef, CasOutcome> casLocked(
      Collection<EventRef> refs, EventState from, Change change) {
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
            } else if (q.decodeState(row.value3()) == from
                && row.value2() == r.epoch()
                && taken.add(r.id())) {
              eligible.add(r);
              out.put(r, CasOutcome.APPLIED);
            } else {
              out.put(r, CasOutcome.STALE);
            }
          }
          if (!eligible.isEmpty()) {
            update(tx, byEpoch(eligible), from, change);
          }
          return out;
        });
  }

  private int update(DSLContext tx, Map<Long, List<Long>> byEpoch, EventState from, Change change) {
    int n = 0;
    for (Map.Entry<Long, List<Long>> e : byEpoch.entrySet()) {
      List<Long> ids = e.getValue();
      n += change.apply(tx, ids, id.in(ids).and(state.eq(sv(from))).and(epoch.eq(e.getKey())));
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
      return b.longValue();
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
}
