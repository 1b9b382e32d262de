package dev.sluice.core.queue.write;

import dev.sluice.core.queue.context.BadRows;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.FireRef;
import dev.sluice.db.store.FireResult;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Fires a group so that one row whose fire the database refuses (a trigger, a constraint) cannot
 * hold up the others: when the group's transaction fails in a way that may concern some of its rows
 * ({@link WriteFaults}), it is split in halves and each half fired on its own, until the row is
 * found. That row is made dead with the database's error as its reason (it would fail the same way
 * at every try), reported as a bad row ({@code fire_refused}), and left out; the others fire as
 * usual. A row that failed alone with a transaction rollback (a deadlock) is not made dead: it is
 * returned as changed, to be read and fired again. A failure of the database as a whole is thrown,
 * as before, and the whole group is retried.
 *
 * <p>Called on a firer thread; holds no state between calls.
 */
final class FireSplitter {
  private final QueueContext ctx;
  private final BadRows badRows;

  FireSplitter(QueueContext ctx, BadRows badRows) {
    this.ctx = ctx;
    this.badRows = badRows;
  }

  FireResult fire(List<FireRef> refs, LongSupplier deadline) {
    try {
      return ctx.dispatch().fireAsPolled(refs, deadline);
    } catch (RuntimeException e) {
      if (!WriteFaults.mayConcernRows(e)) {
        throw e;
      }
      ctx.metrics().dbErrors.increment();
      if (refs.size() == 1) {
        return refused(refs.get(0), e);
      }
      int half = refs.size() / 2;
      FireResult a = fire(refs.subList(0, half), deadline);
      FireResult b = fire(refs.subList(half, refs.size()), deadline);
      return merge(a, b);
    }
  }

  /** The one row of a failed fire: made dead with the error, or let go to be read again. */
  private FireResult refused(FireRef ref, RuntimeException e) {
    String error = WriteFaults.message(e);
    if (rolledBack(e)) {
      return new FireResult(0, Map.of(), Set.of(), Set.of(ref.id()), Set.of());
    }
    String reason = "it could not be fired: " + error;
    EventRef er = new EventRef(ref.id(), ref.epoch());
    CasOutcome o;
    try {
      o = ctx.dispatch().markDead(Map.of(er, reason)).get(er);
    } catch (RuntimeException dead) {
      if (!WriteFaults.mayConcernRows(dead)) {
        throw dead;
      }
      o = null;
      reason += "; making it dead failed too (" + WriteFaults.message(dead) + ")";
    }
    boolean applied = o == CasOutcome.APPLIED;
    badRows.badRow(
        ref.id(),
        "fire_refused",
        "epoch " + ref.epoch() + ": " + reason + (applied ? "; made dead" : "; left as it is"));
    if (applied) {
      ctx.metrics().dead.increment();
      return new FireResult(0, Map.of(), Set.of(), Set.of(), Set.of(ref.id()));
    }
    return new FireResult(0, Map.of(), Set.of(), Set.of(), Set.of());
  }

  /** A transaction rollback (SQLState class 40: a deadlock, a serialization failure). */
  private static boolean rolledBack(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SQLException s
          && s.getSQLState() != null
          && s.getSQLState().startsWith("40")) {
        return true;
      }
    }
    return false;
  }

  private static FireResult merge(FireResult a, FireResult b) {
    Map<Long, EventRow> fired = new LinkedHashMap<>(a.fired());
    fired.putAll(b.fired());
    return new FireResult(
        Math.max(a.deadlineNs(), b.deadlineNs()),
        fired,
        union(a.locked(), b.locked()),
        union(a.changed(), b.changed()),
        union(a.dead(), b.dead()));
  }

  private static Set<Long> union(Set<Long> a, Set<Long> b) {
    Set<Long> u = new HashSet<>(a);
    u.addAll(b);
    return u;
  }
}
