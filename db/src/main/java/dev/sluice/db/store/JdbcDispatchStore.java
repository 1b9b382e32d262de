package dev.sluice.db.store;

import dev.sluice.db.EventState;
import dev.sluice.db.QueueOptions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jooq.CaseValueStep;
import org.jooq.CaseWhenStep;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record2;
import org.jooq.Record3;
import org.jooq.ResultQuery;
import org.jooq.conf.ParamType;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The {@link DispatchStore} of one queue table: the poll (rows the driver cannot read are made dead
 * here), the fire, acks and releases, the orphans and {@link #markDead}. A leader's writes here are
 * fenced ({@link EventCas}).
 */
final class JdbcDispatchStore extends CasStore implements DispatchStore {
  private final FireTransaction fireTx;

  /** An ordered queue's key reads; null for an unordered queue. */
  private final KeyReads keyReads;

  /** The rows the poller's caller holds as their key's head already (see {@link #knownHeads}). */
  private volatile java.util.function.LongPredicate knownHeads = id -> false;

  JdbcDispatchStore(EventCas cas, FireTransaction fireTx, KeyReads keyReads) {
    super(cas);
    this.fireTx = fireTx;
    this.keyReads = keyReads;
  }

  @Override
  public void onBadRow(BadRowListener listener) {
    c.onBadRow(listener);
  }

  @Override
  public void knownHeads(java.util.function.LongPredicate known) {
    this.knownHeads = known == null ? id -> false : known;
  }

  /** The poll query with its values inlined, for {@code EXPLAIN} in tests and the CLI. */
  String pollSql(long dueBeforeNs, int limit) {
    return c.hot.poll(dueBeforeNs, limit).inlined();
  }

  /**
   * The ack compare-and-set with its values inlined (fenced when this store is), for {@code
   * EXPLAIN}: the same text as every fenced CAS but for its SET.
   */
  String ackSql(List<Long> ids, long epoch, long nowNs) {
    return c.hot.casSql(c.hot.ack(nowNs), ids, EventState.FIRED, epoch).inlined();
  }

  @Override
  public List<EventRow> pollPending(long dueBeforeNs, int limit) {
    return poll(c.hot.poll(dueBeforeNs, limit));
  }

  /**
   * A poll: rows the driver cannot read are made dead with the reason (naming the column and the
   * error) and told to the listener; the others are returned. Such a row would otherwise fail every
   * poll of the queue, for good.
   */
  private List<EventRow> poll(HotSql.Sql sql) {
    Map<EventRef, String> unreadable = new LinkedHashMap<>();
    List<OutOfRangeRow> outOfRange = new ArrayList<>();
    List<EventRow> rows = c.hot.query(sql, unreadable, outOfRange);
    if (keyReads != null) {
      rows = keyReads.placed(rows, knownHeads);
    }
    outOfRange.forEach(this::markOutOfRangeDead);
    if (!unreadable.isEmpty()) {
      Map<EventRef, CasOutcome> out = markDead(unreadable);
      unreadable.forEach(
          (ref, why) -> {
            if (out.get(ref) == CasOutcome.APPLIED) {
              c.badRows().badRow(ref.id(), "unreadable_row", why + "; made dead");
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
    HotSql.Sql sql = c.hot.deadByDecimal(row.id(), row.epoch());
    boolean applied =
        c.ctx.transactionResult(
            cfg -> {
              DSLContext tx = DSL.using(cfg);
              if (tx.execute(sql.text(), sql.values().toArray()) == 0) {
                c.checkFence(tx); // changed meanwhile, or the lease is another's
                return false;
              }
              DeadReasons.record(
                  tx,
                  c.q.name(),
                  Map.of(new EventRef(row.wrappedId(), row.wrappedEpoch()), row.reason()));
              return true;
            });
    if (applied) {
      c.badRows().badRow(row.wrappedId(), "id_out_of_range", row.reason() + "; made dead");
    }
  }

  /** The continuation poll with its values inlined, for {@code EXPLAIN}. */
  String pollAfterSql(long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return c.hot.pollAfter(dueBeforeNs, afterTimeNextNs, afterId, limit).inlined();
  }

  @Override
  public List<EventRow> pollPendingAfter(
      long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return poll(c.hot.pollAfter(dueBeforeNs, afterTimeNextNs, afterId, limit));
  }

  @Override
  public List<EventRow> pollTenants(List<TenantRead> reads, long dueBeforeNs) {
    return reads.isEmpty() ? List.of() : poll(c.hot.pollTenants(reads, dueBeforeNs));
  }

  /**
   * The several-tenant poll with its values inlined, for {@code EXPLAIN}: one statement, a UNION
   * ALL of each tenant's read on the (state, tenant, time_next) index.
   */
  String pollTenantsSql(List<TenantRead> reads, long dueBeforeNs) {
    return c.hot.pollTenants(reads, dueBeforeNs).inlined();
  }

  private ResultQuery<Record2<String, Long>> pendingTenantsQuery(String after, int limit) {
    Condition where = c.state.eq(c.sv(EventState.PENDING));
    if (after != null) {
      where = where.and(c.tenant.gt(after)); // still a range on (state, tenant): a loose scan
    }
    return c.ctx
        .select(c.tenant, DSL.min(c.timeNext))
        .from(c.t)
        .where(where)
        // By the index's leading (state, tenant), not by tenant alone: only so do MariaDB and
        // MySQL read it by a loose index scan instead of every pending row.
        .groupBy(c.state, c.tenant)
        .orderBy(c.state, c.tenant)
        .limit(limit);
  }

  /** The SQL of {@link #pendingTenants}, with its values inlined (for EXPLAIN in tests). */
  String pendingTenantsSql(int limit) {
    return pendingTenantsQuery(null, limit).getSQL(ParamType.INLINED);
  }

  /** The SQL of {@link #pendingTenantsAfter}, with its values inlined (for EXPLAIN in tests). */
  String pendingTenantsAfterSql(String after, int limit) {
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
    return c.casMarked(
        refs,
        EventState.PENDING,
        c.hot.fire(deadlineNs),
        (ref, st, ep, tn, ta) ->
            st == EventState.FIRED && ep == ref.epoch() + 1 && tn == deadlineNs);
  }

  @Override
  public FireResult fireAsPolled(List<FireRef> refs, java.util.function.LongSupplier deadlineNs) {
    if (refs.isEmpty()) {
      return new FireResult(0, Map.of(), Set.of(), Set.of(), Set.of());
    }
    return fireTx.fire(refs, deadlineNs, c.badRows());
  }

  @Override
  public Map<EventRef, CasOutcome> ack(Collection<EventRef> refs, long nowNs) {
    return c.casMarked(
        refs,
        EventState.FIRED,
        c.hot.ack(nowNs),
        (ref, st, ep, tn, ta) ->
            st == EventState.ACKED && ep == ref.epoch() && ta != null && ta == nowNs);
  }

  @Override
  public Map<EventRef, Extension.Outcome> extend(Collection<Extension> extensions) {
    if (extensions.isEmpty()) {
      return Map.of();
    }
    Map<Long, Extension> byId = new LinkedHashMap<>();
    for (Extension x : extensions) {
      if (byId.put(x.ref().id(), x) != null) {
        // The same event twice (two attempts, or two asks): one CAS each, in one transaction.
        return c.ctx.transactionResult(cfg -> extendEach(DSL.using(cfg), extensions));
      }
    }
    // One autocommit UPDATE for the batch; each row changes only under its own CAS condition.
    Condition each = DSL.falseCondition();
    for (Extension x : extensions) {
      each =
          each.or(
              c.id
                  .eq(x.ref().id())
                  .and(c.epoch.eq(x.ref().epoch()))
                  .and(c.timeNext.lt(x.deadlineNs())));
    }
    Map<Long, Long> deadlines = new HashMap<>();
    byId.forEach((id, x) -> deadlines.put(id, x.deadlineNs()));
    List<Long> ids = new ArrayList<>(byId.keySet());
    int n =
        c.ctx
            .update(c.t)
            .set(c.timeNext, dueAt(ids, deadlines))
            .where(c.id.in(ids))
            .and(c.state.eq(c.sv(EventState.FIRED)))
            .and(each)
            .execute();
    Map<EventRef, Extension.Outcome> out = new HashMap<>();
    if (n == extensions.size()) {
      for (Extension x : extensions) {
        out.put(x.ref(), new Extension.Outcome(CasOutcome.APPLIED, x.deadlineNs()));
      }
      return out;
    }
    // Some changed nothing: one read tells "already that late" (applied) from stale or unknown.
    Map<Long, Row> rows = new HashMap<>();
    for (var r :
        c.ctx.select(c.id, c.state, c.epoch, c.timeNext).from(c.t).where(c.id.in(ids)).fetch()) {
      rows.put(r.value1(), new Row(r.value2(), r.value3(), r.value4()));
    }
    for (Extension x : extensions) {
      out.put(x.ref(), outcome(x.ref(), rows.get(x.ref().id())));
    }
    return out;
  }

  /** Per event, one CAS UPDATE each (and a read when it changes nothing). */
  private Map<EventRef, Extension.Outcome> extendEach(
      DSLContext tx, Collection<Extension> extensions) {
    Map<EventRef, Extension.Outcome> out = new HashMap<>();
    for (Extension x : extensions) {
      EventRef ref = x.ref();
      int n =
          tx.update(c.t)
              .set(c.timeNext, x.deadlineNs())
              .where(c.id.eq(ref.id()))
              .and(c.epoch.eq(ref.epoch()))
              .and(c.state.eq(c.sv(EventState.FIRED)))
              .and(c.timeNext.lt(x.deadlineNs()))
              .execute();
      out.put(
          ref,
          n == 1
              ? new Extension.Outcome(CasOutcome.APPLIED, x.deadlineNs())
              : outcome(
                  ref,
                  tx.select(c.state, c.epoch, c.timeNext)
                      .from(c.t)
                      .where(c.id.eq(ref.id()))
                      .fetchOne(r -> new Row(r.value1(), r.value2(), r.value3()))));
    }
    return out;
  }

  /** A row as an extension's read-back sees it. */
  private record Row(Object state, long epoch, long timeNext) {}

  /** What the row (null: none) says of an extension that did not change it. */
  private Extension.Outcome outcome(EventRef ref, Row row) {
    if (row == null) {
      return Extension.Outcome.UNKNOWN;
    }
    if (c.stateOf(ref.id(), row.state()) == EventState.FIRED && row.epoch() == ref.epoch()) {
      return new Extension.Outcome(CasOutcome.APPLIED, row.timeNext());
    }
    return Extension.Outcome.STALE;
  }

  @Override
  public Map<EventRef, CasOutcome> release(Collection<Release> releases) {
    Map<Long, List<Release>> byDue = new LinkedHashMap<>();
    for (Release r : releases) {
      byDue.computeIfAbsent(r.dueBy(), k -> new ArrayList<>()).add(r);
    }
    Map<EventRef, CasOutcome> out = new HashMap<>();
    byDue.forEach(
        (due, rs) -> out.putAll(release(rs, due > 0 ? c.timeNext.le(DSL.val(due)) : null)));
    return out;
  }

  /** Releases that share one further condition ({@code also}, or none when null). */
  private Map<EventRef, CasOutcome> release(Collection<Release> asked, Condition also) {
    Map<EventRef, CasOutcome> out = new HashMap<>();
    Collection<Release> releases = asked;
    if (c.q.hasSnoozes()) {
      List<Release> failed = new ArrayList<>();
      List<Release> snoozed = new ArrayList<>();
      for (Release r : asked) {
        (r.snooze() ? snoozed : failed).add(r);
      }
      Map<EventRef, CasOutcome> s = snooze(snoozed, also);
      for (Release r : snoozed) {
        if (s.get(r.ref()) == CasOutcome.APPLIED) {
          out.put(r.ref(), CasOutcome.APPLIED);
        } else {
          failed.add(r); // at max_snoozes (or stale: the failure's CAS says so again)
        }
      }
      releases = byAttempts(failed);
    }
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
        c.cas(
            dead,
            EventState.FIRED,
            true,
            also,
            (tx, ids, guard) -> {
              int n = tx.update(c.t).set(c.state, c.sv(EventState.DEAD)).where(guard).execute();
              Map<EventRef, String> why = new LinkedHashMap<>();
              for (Long i : ids) {
                why.put(deadRefs.get(i), deadReason.get(i));
              }
              DeadReasons.record(tx, c.q.name(), why);
              return n;
            }));
    out.putAll(
        c.cas(
            retry,
            EventState.FIRED,
            true,
            also,
            ids -> {
              CaseValueStep<Long> choose = DSL.choose(c.id);
              CaseWhenStep<Long, Long> when = null;
              for (Long i : ids) {
                when =
                    when == null
                        ? choose.when(DSL.val(i), DSL.val(retryAt.get(i)))
                        : when.when(DSL.val(i), DSL.val(retryAt.get(i)));
              }
              Map<Field<?>, Object> set = new LinkedHashMap<>();
              set.put(c.state, c.sv(EventState.PENDING));
              set.put(c.timeNext, when.otherwise(c.timeNext));
              return set;
            }));
    // Never sent: the fire is undone (fired at e + 1 -> pending at e). No delivery of attempt e + 1
    // exists, so no answer to it can come, and the next fire is e + 1 again.
    out.putAll(
        c.cas(
            unsent,
            EventState.FIRED,
            true,
            also,
            ids -> {
              Map<Field<?>, Object> set = new LinkedHashMap<>();
              set.put(c.state, c.sv(EventState.PENDING));
              set.put(c.epoch, c.epoch.minus(1));
              set.put(c.timeNext, dueAt(ids, retryAt));
              return set;
            }));
    return out;
  }

  /**
   * Snoozes: fired → pending at their time, the epoch kept (the next fire makes the next one, so
   * the snoozed attempt's answers stay stale) and {@code snoozes} counted up, for the rows snoozed
   * fewer than {@code max_snoozes} times; the others are not changed (STALE here).
   */
  private Map<EventRef, CasOutcome> snooze(List<Release> snoozed, Condition also) {
    if (snoozed.isEmpty()) {
      return Map.of();
    }
    Map<Long, Long> at = new HashMap<>();
    List<EventRef> refs = new ArrayList<>();
    for (Release r : snoozed) {
      at.put(r.ref().id(), r.retryAtNs());
      refs.add(r.ref());
    }
    Condition under = snoozes.lt(c.q.options().maxSnoozes());
    return c.cas(
        refs,
        EventState.FIRED,
        true,
        also == null ? under : also.and(under),
        ids -> {
          Map<Field<?>, Object> set = new LinkedHashMap<>();
          set.put(c.state, c.sv(EventState.PENDING));
          set.put(c.timeNext, dueAt(ids, at));
          set.put(snoozes, snoozes.plus(1));
          return set;
        });
  }

  /**
   * On a table with {@code snoozes}, attempts are {@code epoch - snoozes}: a failed attempt judged
   * dead by its epoch alone is judged again from the row's count (one read, of those only), and
   * goes back to pending at its retry time when its attempts are not used up.
   */
  private List<Release> byAttempts(List<Release> failed) {
    Map<Long, Release> dead = new LinkedHashMap<>();
    for (Release r : failed) {
      if (r.dead()) {
        dead.put(r.ref().id(), r);
      }
    }
    if (dead.isEmpty()) {
      return failed;
    }
    Map<Long, Integer> counts = new HashMap<>();
    c.ctx
        .select(c.id, snoozes)
        .from(c.t)
        .where(c.id.in(dead.keySet()))
        .fetch()
        .forEach(r -> counts.put(r.value1(), r.value2()));
    int max = c.q.options().maxAttempts();
    List<Release> out = new ArrayList<>(failed.size());
    for (Release r : failed) {
      long attempts = r.ref().epoch() - counts.getOrDefault(r.ref().id(), 0);
      out.add(
          r.dead() && !QueueOptions.isLastAttempt(attempts, max)
              ? new Release(r.ref(), r.retryAtNs(), false, null, false, r.dueBy(), false)
              : r);
    }
    return out;
  }

  /** {@code time_next} per id, as a CASE on the id. */
  private Field<Long> dueAt(List<Long> ids, Map<Long, Long> at) {
    CaseValueStep<Long> choose = DSL.choose(c.id);
    CaseWhenStep<Long, Long> when = null;
    for (Long i : ids) {
      when =
          when == null
              ? choose.when(DSL.val(i), DSL.val(at.get(i)))
              : when.when(DSL.val(i), DSL.val(at.get(i)));
    }
    return when.otherwise(c.timeNext);
  }

  /** The optional {@code snoozes} column (read only where the table has it). */
  private final Field<Integer> snoozes =
      DSL.field(DSL.name(dev.sluice.client.QueueColumns.SNOOZES), SQLDataType.INTEGER);

  @Override
  public Map<Object, Integer> firedPerKey(Collection<Object> keys, Collection<Long> except) {
    Field<Object> key = DSL.field(DSL.name(c.q.options().orderingColumn()));
    Condition which = c.state.eq(c.sv(EventState.FIRED)).and(key.isNotNull());
    if (keys != null) {
      if (keys.isEmpty()) {
        return Map.of();
      }
      which = which.and(key.in(keys));
    }
    if (!except.isEmpty()) {
      which = which.and(c.id.notIn(except));
    }
    Map<Object, Integer> out = new HashMap<>();
    for (var r : c.ctx.select(key, DSL.count()).from(c.t).where(which).groupBy(key).fetch()) {
      out.put(DispatchStore.normalKey(r.value1()), r.value2());
    }
    return out;
  }

  @Override
  public List<EventRef> expiredFired(long beforeNs, int limit) {
    return c.ctx
        .select(c.id, c.epoch)
        .from(c.t)
        .where(c.state.eq(c.sv(EventState.FIRED)).and(c.timeNext.le(beforeNs)))
        .orderBy(c.timeNext, c.id)
        .limit(limit)
        .fetch(r -> new EventRef(r.value1(), r.value2()));
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
    return c.ctx.transactionResult(
        cfg -> {
          DSLContext tx = DSL.using(cfg);
          Map<Long, Record3<Long, Long, Object>> rows = new HashMap<>();
          for (Record3<Long, Long, Object> r :
              tx.select(c.id, c.epoch, c.state).from(c.t).where(c.id.in(ids)).forUpdate().fetch()) {
            rows.put(r.value1(), r);
          }
          Map<EventRef, CasOutcome> out = new HashMap<>();
          Map<EventRef, String> dying = new LinkedHashMap<>();
          Set<Long> taken = new HashSet<>();
          for (Map.Entry<EventRef, String> e : reasons.entrySet()) {
            EventRef r = e.getKey();
            Record3<Long, Long, Object> row = rows.get(r.id());
            EventState st = row == null ? null : c.stateOf(r.id(), row.value3());
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
          for (Map.Entry<Long, List<Long>> g : EventCas.byEpoch(dying.keySet()).entrySet()) {
            n +=
                tx.update(c.t)
                    .set(c.state, c.sv(EventState.DEAD))
                    .where(c.id.in(g.getValue()))
                    .and(c.epoch.eq(g.getKey()))
                    .and(c.state.in(c.sv(EventState.PENDING), c.sv(EventState.FIRED)))
                    .and(c.fenced)
                    .execute();
          }
          if (n < dying.size()) {
            c.checkFence(tx); // the rows are locked and matched: only the fence refuses them
          }
          DeadReasons.record(tx, c.q.name(), dying);
          return out;
        });
  }
}
