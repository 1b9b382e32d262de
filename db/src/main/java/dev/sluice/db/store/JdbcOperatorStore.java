package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.*;

import dev.sluice.db.EventState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The {@link OperatorStore} of one queue table. Every write here is an operator's command, unfenced
 * even through a leader's store: its compare-and-set on the epoch makes it right whoever leads.
 */
final class JdbcOperatorStore extends CasStore implements OperatorStore {
  private final JdbcOrderingStore ordering;

  JdbcOperatorStore(EventCas cas, JdbcOrderingStore ordering) {
    super(cas);
    this.ordering = ordering;
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
        c.ctx.select(c.id, c.epoch, c.state, c.tenant).from(c.t).where(c.id.in(ids)).fetch()) {
      rows.put(r.value1(), r);
    }
    List<EventRef> pending = new ArrayList<>();
    for (Long i : ids) {
      org.jooq.Record4<Long, Long, Object, String> r = rows.get(i);
      // Another tenant's event is answered as one that does not exist: the answer leaks nothing.
      if (r == null || !tenantAllowed.test(r.value4() == null ? "" : r.value4())) {
        out.put(i, CasOutcome.UNKNOWN);
      } else if (c.stateOf(i, r.value3()) != EventState.PENDING) {
        out.put(i, CasOutcome.STALE);
      } else {
        pending.add(new EventRef(i, r.value2()));
      }
    }
    // An operator's command: unfenced (it is right whoever leads, by its CAS on the epoch).
    c.cas(
            pending,
            EventState.PENDING,
            false,
            x -> {
              Map<Field<?>, Object> set = new LinkedHashMap<>();
              set.put(c.state, c.sv(EventState.CANCELLED));
              set.put(c.timeAcked, nowNs);
              set.put(c.timeNext, nowNs);
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
  public Map<Long, Long> epochs(Collection<Long> ids) {
    Map<Long, Long> out = new HashMap<>();
    if (!ids.isEmpty()) {
      c.ctx
          .select(c.id, c.epoch)
          .from(c.t)
          .where(c.id.in(ids))
          .fetch()
          .forEach(r -> out.put(r.value1(), r.value2()));
    }
    return out;
  }

  @Override
  public List<EventRow> listDead(long afterId, int limit) {
    return c.hot.query(c.hot.dead(afterId, limit));
  }

  /**
   * Dead rows whose id is above 2^63 - 1 (a {@code BIGINT UNSIGNED} id column), which {@link
   * #listDead} cannot return, with their recorded reasons; empty for a signed id column.
   */
  @Override
  public List<OutOfRangeRow> deadOutOfRange(int limit) {
    if (!c.hot.unsignedId()) {
      return List.of();
    }
    HotSql.Sql sql = c.hot.deadOutOfRange(limit);
    List<OutOfRangeRow> rows = new ArrayList<>();
    for (Record r : c.ctx.fetch(sql.text(), sql.values().toArray())) {
      rows.add(new OutOfRangeRow(r.get(0, String.class), r.get(1, String.class), null));
    }
    List<Long> ids = new ArrayList<>();
    rows.forEach(r -> ids.add(r.wrappedId()));
    Map<Long, String> why = DeadReasons.read(c.ctx, c.q.name(), ids);
    List<OutOfRangeRow> out = new ArrayList<>(rows.size());
    rows.forEach(r -> out.add(new OutOfRangeRow(r.id(), r.epoch(), why.get(r.wrappedId()))));
    return out;
  }

  @Override
  public Map<EventRef, CasOutcome> replayDead(Collection<EventRef> refs) {
    Field<Long> dbNow = DSL.field(NOW_NS_SQL, SQLDataType.BIGINT);
    // An operator's command: unfenced.
    return c.cas(
        refs,
        EventState.DEAD,
        false,
        (tx, ids, guard) -> {
          int n =
              tx.update(c.t)
                  .set(c.state, c.sv(EventState.PENDING))
                  .set(c.timeNext, dbNow)
                  .where(guard)
                  .execute();
          DeadReasons.remove(tx, c.q.name(), ids);
          return n;
        });
  }

  @Override
  public java.util.Optional<Found> find(long rowId) {
    List<EventRow> rows = c.hot.query(c.hot.byId(rowId));
    if (rows.isEmpty()) {
      return java.util.Optional.empty();
    }
    // Read apart from the row: a change in between shows the newer state (operators only).
    Object st = c.ctx.select(c.state).from(c.t).where(c.id.eq(rowId)).fetchOne(c.state);
    return st == null
        ? java.util.Optional.empty()
        : java.util.Optional.of(new Found(c.stateOf(rowId, st), rows.get(0)));
  }

  @Override
  public Map<EventRef, CasOutcome> purgeDead(Collection<EventRef> refs) {
    // An operator's command: unfenced.
    return c.cas(
        refs,
        EventState.DEAD,
        false,
        (tx, ids, guard) -> {
          int n = tx.deleteFrom(c.t).where(guard).execute();
          DeadReasons.remove(tx, c.q.name(), ids);
          return n;
        });
  }

  @Override
  public Map<Long, String> deadReasons(Collection<Long> ids) {
    return DeadReasons.read(c.ctx, c.q.name(), ids);
  }

  @Override
  public List<HaltedKey> haltedKeys(int limit) {
    return ordering.haltedKeys(limit);
  }

  @Override
  public CasOutcome skipDead(EventRef ref, long nowNs) {
    java.util.Optional<Found> found = find(ref.id());
    // An operator's command: unfenced (its CAS on the epoch makes it right whoever leads).
    CasOutcome out =
        c.cas(
                List.of(ref),
                EventState.DEAD,
                false,
                (tx, ids, guard) -> {
                  int n =
                      tx.update(c.t)
                          .set(c.state, c.sv(EventState.CANCELLED))
                          .set(c.timeAcked, nowNs)
                          .set(c.timeNext, nowNs)
                          .where(guard)
                          .execute();
                  DeadReasons.remove(tx, c.q.name(), ids);
                  return n;
                })
            .get(ref);
    if (out == CasOutcome.APPLIED && found.isPresent()) {
      String col = c.q.orderingColumn();
      ordering.turnAfterSkip(col == null ? null : found.get().row().userColumns().get(col));
    }
    return out;
  }
}
