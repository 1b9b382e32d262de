package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.*;

import dev.sluice.db.EventState;
import dev.sluice.db.Jooq;
import dev.sluice.db.QueueTable;
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
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.DataType;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record4;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * One queue table as the JDBC stores see it — its columns, its hot statements, its fence, who hears
 * of bad rows — and the compare-and-set every store of the table shares. One per {@link
 * JdbcEventStore}; each job's store ({@link JdbcDispatchStore}, {@link JdbcOrderingStore}, {@link
 * JdbcOperatorStore}, {@link JdbcMaintenanceStore}) writes through it.
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
final class EventCas {
  final DSLContext ctx;
  final QueueTable q;
  final Table<Record> t;
  final Field<Long> id = DSL.field(DSL.name(ID), SQLDataType.BIGINT);
  final Field<Long> timeNext = DSL.field(DSL.name(TIME_NEXT), SQLDataType.BIGINT);
  final Field<Long> epoch = DSL.field(DSL.name(EPOCH), SQLDataType.BIGINT);
  final Field<Long> timeAcked = DSL.field(DSL.name(TIME_ACKED), SQLDataType.BIGINT);
  final Field<String> tenant = DSL.field(DSL.name(TENANT), SQLDataType.VARCHAR);
  final Field<Object> state;
  final HotSql hot;

  /** The leader's fence (null: an unfenced store) and its condition ({@code noCondition}). */
  final Fence fence;

  final Condition fenced;

  private volatile BadRowListener badRows = BadRowListener.NONE;

  EventCas(DataSource dataSource, QueueTable queue, Fence fence) {
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

  BadRowListener badRows() {
    return badRows;
  }

  void onBadRow(BadRowListener listener) {
    this.badRows = listener == null ? BadRowListener.NONE : listener;
  }

  /** The state of a row read back, telling the listener when it is none of Sluice's. */
  EventState stateOf(long rowId, Object value) {
    EventState s = q.decodeState(value);
    if (s == null) {
      badRows.badRow(rowId, "unknown_state", "state " + value + " is none of Sluice's: skipped");
    }
    return s;
  }

  Object sv(EventState s) {
    return q.stateValue(s);
  }

  /** Throws when the fence refuses this store's writes now (read after a short write). */
  void checkFence(DSLContext on) {
    if (fence != null) {
      FencedOffException e = on.connectionResult(hot::fencedOff);
      if (e != null) {
        throw e;
      }
    }
  }

  long serverTimeNs() {
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
  interface Mark {
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
  Map<EventRef, CasOutcome> casMarked(
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
  interface Change {
    int apply(DSLContext tx, List<Long> ids, Condition guard);
  }

  Map<EventRef, CasOutcome> cas(
      Collection<EventRef> refs,
      EventState from,
      boolean fenced,
      Function<List<Long>, Map<Field<?>, Object>> setFor) {
    return cas(refs, from, fenced, null, setFor);
  }

  Map<EventRef, CasOutcome> cas(
      Collection<EventRef> refs,
      EventState from,
      boolean fenced,
      Condition also,
      Function<List<Long>, Map<Field<?>, Object>> setFor) {
    return cas(
        refs,
        from,
        fenced,
        also,
        (tx, ids, guard) -> tx.update(t).set(setFor.apply(ids)).where(guard).execute());
  }

  /**
   * {@code fenced}: a leader's own write, conditioned on its {@link Fence} (when the store has
   * one); false for operators' commands.
   */
  Map<EventRef, CasOutcome> cas(
      Collection<EventRef> refs, EventState from, boolean fenced, Change change) {
    return cas(refs, from, fenced, null, change);
  }

  /**
   * {@code also}: a further condition each row must meet to change (null: none), such as an
   * expiry's {@code time_next <= t}; a row that fails it is {@link CasOutcome#STALE}.
   */
  Map<EventRef, CasOutcome> cas(
      Collection<EventRef> refs, EventState from, boolean fenced, Condition also, Change change) {
    Change guarded =
        also == null ? change : (tx, ids, guard) -> change.apply(tx, ids, guard.and(also));
    if (refs.isEmpty()) {
      return Map.of();
    }
    Map<Long, List<Long>> byEpoch = byEpoch(refs);
    try {
      return ctx.transactionResult(
          cfg -> {
            DSLContext tx = DSL.using(cfg);
            int n = update(tx, byEpoch, from, fenced, guarded);
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
      return casLocked(refs, from, fenced, also, guarded);
    }
  }

  /** The exact path: lock the rows, decide per event, change only those that match. */
  private Map<EventRef, CasOutcome> casLocked(
      Collection<EventRef> refs, EventState from, boolean fenced, Condition also, Change change) {
    Field<Boolean> meets = DSL.field(also == null ? DSL.trueCondition() : also);
    Set<Long> ids = new HashSet<>();
    for (EventRef r : refs) {
      ids.add(r.id());
    }
    return ctx.transactionResult(
        cfg -> {
          DSLContext tx = DSL.using(cfg);
          Map<Long, Record4<Long, Long, Object, Boolean>> rows = new HashMap<>();
          for (Record4<Long, Long, Object, Boolean> r :
              tx.select(id, epoch, state, meets).from(t).where(id.in(ids)).forUpdate().fetch()) {
            rows.put(r.value1(), r);
          }
          Map<EventRef, CasOutcome> out = new HashMap<>();
          List<EventRef> eligible = new ArrayList<>();
          Set<Long> taken = new HashSet<>();
          for (EventRef r : refs) {
            Record4<Long, Long, Object, Boolean> row = rows.get(r.id());
            if (row == null) {
              out.put(r, CasOutcome.UNKNOWN);
            } else if (stateOf(r.id(), row.value3()) == from
                && row.value2() == r.epoch()
                && Boolean.TRUE.equals(row.value4())
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

  static Map<Long, List<Long>> byEpoch(Collection<EventRef> refs) {
    Map<Long, List<Long>> m = new LinkedHashMap<>();
    for (EventRef r : refs) {
      m.computeIfAbsent(r.epoch(), k -> new ArrayList<>()).add(r.id());
    }
    return m;
  }

  /**
   * Holds ({@code time_next + HELD_NS}, rows not held yet) or releases ({@code - HELD_NS}, held
   * rows) pending rows, a compare-and-set on the epoch (kept as it is); {@code fenced}: the
   * leader's own write.
   *
   * <p>The leader's own holds and releases are the hot path's ({@link #casMarked}): one autocommit
   * UPDATE per expected epoch, one round trip. A row the UPDATE missed is read back: it counts as
   * {@link CasOutcome#APPLIED} when it is pending at the expected epoch and held (a hold) or not (a
   * release) — the change asked for is in the table, whoever made it (the only other writer of held
   * rows is an operator's skip, which releases the same row for the same reason).
   */
  Map<EventRef, CasOutcome> shiftHeld(Collection<EventRef> refs, boolean hold, boolean fenced) {
    if (fenced) {
      return casMarked(
          refs,
          EventState.PENDING,
          hot.shiftHeld(hold),
          (ref, st, ep, timeNext, acked) ->
              st == EventState.PENDING && ep == ref.epoch() && (timeNext >= HELD_NS) == hold);
    }
    return cas(
        refs,
        EventState.PENDING,
        false,
        (tx, ids, guard) ->
            tx.update(t)
                .set(timeNext, hold ? timeNext.plus(HELD_NS) : timeNext.minus(HELD_NS))
                .where(guard.and(hold ? timeNext.lt(HELD_NS) : timeNext.ge(HELD_NS)))
                .execute());
  }
}
