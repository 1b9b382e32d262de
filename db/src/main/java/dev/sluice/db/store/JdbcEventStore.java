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
  private final Field<Object> state = DSL.field(DSL.name(STATE));
  private final HotSql hot;

  public JdbcEventStore(DataSource dataSource, QueueTable queue) {
    this.ctx = Jooq.context(dataSource);
    this.q = queue;
    this.t = DSL.table(DSL.name(queue.name()));
    this.hot = new HotSql(dataSource, queue);
  }

  @Override
  public String queue() {
    return q.name();
  }

  private Object sv(EventState s) {
    return q.stateValue(s);
  }

  /** The poll query with its values inlined, for {@code EXPLAIN} in tests and the CLI. */
  public String pollSql(long dueBeforeNs, int limit) {
    return hot.poll(dueBeforeNs, limit).inlined();
  }

  @Override
  public List<EventRow> pollPending(long dueBeforeNs, int limit) {
    return hot.query(hot.poll(dueBeforeNs, limit));
  }

  /** The continuation poll with its values inlined, for {@code EXPLAIN}. */
  public String pollAfterSql(long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return hot.pollAfter(dueBeforeNs, afterTimeNextNs, afterId, limit).inlined();
  }

  @Override
  public List<EventRow> pollPendingAfter(
      long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return hot.query(hot.pollAfter(dueBeforeNs, afterTimeNextNs, afterId, limit));
  }

  @Override
  public List<EventRow> pollTenants(List<TenantRead> reads, long dueBeforeNs) {
    return reads.isEmpty() ? List.of() : hot.query(hot.pollTenants(reads, dueBeforeNs));
  }

  /**
   * The several-tenant poll with its values inlined, for {@code EXPLAIN}: one statement, a UNION
   * ALL of each tenant's read on the (state, tenant, time_next) index.
   */
  public String pollTenantsSql(List<TenantRead> reads, long dueBeforeNs) {
    return hot.pollTenants(reads, dueBeforeNs).inlined();
  }

  private ResultQuery<Record2<String, Long>> pendingTenantsQuery(int limit) {
    return ctx.select(tenant, DSL.min(timeNext))
        .from(t)
        .where(state.eq(sv(EventState.PENDING)))
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

  @Override
  public List<TenantDue> pendingTenants(int limit) {
    List<TenantDue> out = new ArrayList<>();
    for (Record r : pendingTenantsQuery(limit).fetch()) {
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
    Map<Long, EventRef> deadRefs = new HashMap<>();
    Map<Long, String> deadReason = new HashMap<>();
    for (Release r : releases) {
      if (r.dead()) {
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
    return new StateCounts(n[0], n[1], n[2], n[3], n[4], oldestPendingDueNs().orElse(0));
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
    return hot.query(hot.dead(afterId, limit));
  }

  @Override
  public Map<EventRef, CasOutcome> replayDead(Collection<EventRef> refs) {
    Field<Long> dbNow = DSL.field(NOW_NS_SQL, SQLDataType.BIGINT);
    return cas(
        refs,
        EventState.DEAD,
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
  public Map<EventRef, CasOutcome> purgeDead(Collection<EventRef> refs) {
    return cas(
        refs,
        EventState.DEAD,
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
            EventState st = row == null ? null : q.decodeState(row.value3());
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
          for (Map.Entry<Long, List<Long>> g : byEpoch(dying.keySet()).entrySet()) {
            tx.update(t)
                .set(state, sv(EventState.DEAD))
                .where(id.in(g.getValue()))
                .and(epoch.eq(g.getKey()))
                .and(state.in(sv(EventState.PENDING), sv(EventState.FIRED)))
                .execute();
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
