package dev.sluice.core.queue.dispatch;

import dev.sluice.client.QueueColumns;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What becomes of the events in flight: an outlet's acks, commits, nacks and releases, ack
 * deadlines that pass, an outlet that leaves, a graceful stop's release, orphans found in the
 * table, and the database's answers to all of these ({@link #settled}).
 *
 * <p>An event in flight starts settling once: then its credit goes back ({@link CreditLedger#free})
 * and its change goes to the {@code AckBatcher}; every failed attempt (nack, timeout, detach,
 * orphan) goes through the queue's one {@code RetryPolicy}; a release through no fault of the
 * event's goes back to pending at once and is never dead: one never sent (the outlet left before
 * the send, or gave it back unsent) spends no attempt, one a receiver still holds at a graceful
 * stop does. The event leaves the {@link InFlightTable} when the database has answered (or when the
 * outlet committed the ack itself).
 *
 * <p>Owned by the {@link Dispatcher} thread: no locks. It keeps no state of its own; it changes the
 * table, the ledger and the window.
 */
final class Settlements {
  private static final Logger log = LoggerFactory.getLogger(Settlements.class);

  private final QueueContext ctx;
  private final InFlightTable table;
  private final CreditLedger ledger;
  private final WindowFeed feed;

  /** Where changes go to be written: the {@code AckBatcher}. */
  private final Consumer<Completion> acks;

  Settlements(
      QueueContext ctx,
      InFlightTable table,
      CreditLedger ledger,
      WindowFeed feed,
      Consumer<Completion> acks) {
    this.ctx = ctx;
    this.table = table;
    this.ledger = ledger;
    this.feed = feed;
    this.acks = acks;
  }

  /**
   * {@code f} starts settling (an ack, nack, timeout or release is on its way to the database) and
   * gives back its credit. False when it was settling already, or is not in flight (null).
   */
  private boolean settle(InFlight f) {
    if (f == null || f.settling) {
      return false;
    }
    f.settling = true;
    ledger.free(f);
    return true;
  }

  /** A failed attempt, on its way to pending with backoff or to dead: see {@code RetryPolicy}. */
  private Completion failed(
      EventRef ref, long now, long retryAfterNs, AttachedOutlet from, String reason) {
    return Completion.failed(
        ctx.retry().afterFailure(ref, now, retryAfterNs, reason), from, reason);
  }

  /**
   * The release of an attempt whose deadline passed at {@code now}: it applies only if no extension
   * moved the row's deadline since ({@link Release#dueBy}). An extension that reached another
   * manager, or that this one's table learnt too late, therefore keeps its attempt fired; this
   * manager then forgets it, and the collector of overdue rows finds it at its new deadline.
   */
  private Completion expired(EventRef ref, long now, String reason) {
    return Completion.failed(
        ctx.retry().afterFailure(ref, now, 0, reason).expiredAt(now), null, reason);
  }

  /** Ack deadlines that passed at {@code now}: back to pending with backoff, or dead. */
  void expire(long now) {
    for (InFlight f : table.expired(now)) {
      settle(f);
      ctx.metrics().timeouts.increment();
      acks.accept(expired(f.ref(), now, "ack timeout"));
    }
  }

  /**
   * {@code f} was fired but is not sent (its outlet left, or dispatch stopped): pending again, the
   * fire undone.
   */
  void unsent(InFlight f, long now) {
    settle(f);
    acks.accept(Completion.released(f.ref(), now, null, "receiver gone before the send"));
  }

  /** The outlet {@code r} left: what it held fails at once, not after ack_wait. */
  void detached(AttachedOutlet r, String why) {
    long now = ctx.clock().nowNs();
    List<InFlight> held = table.unsettled(f -> f.owner == r);
    for (InFlight f : held) {
      settle(f);
      acks.accept(failed(f.ref(), now, 0, null, why));
    }
    if (!held.isEmpty()) {
      log.info(
          "{}: {} gone ({}), releasing its {} in-flight events", ctx.where(), r, why, held.size());
    }
  }

  /**
   * Graceful stop: whatever outlets still hold goes back to pending, without backoff. It was sent,
   * so the attempt counts (a receiver may still answer it).
   */
  void releaseAll(String why) {
    long now = ctx.clock().nowNs();
    for (InFlight f : table.unsettled(f -> true)) {
      settle(f);
      acks.accept(Completion.takenBack(f.ref(), now, why));
    }
  }

  /**
   * Leadership lost: what outlets hold stays fired in the table, for them to ack through the CAS
   * wherever the ack lands (or for the new leader's retry collector), but this queue will never
   * settle it, so the credits it took on each outlet go back now. Without this a receiver that
   * stays connected across the loss, to this process leading again, keeps credits no queue gives
   * back and is sent nothing more. Returns how many events were let go.
   */
  int abandoned() {
    int n = 0;
    for (InFlight f : table.unsettled(f -> true)) {
      if (settle(f)) {
        n++;
      }
    }
    return n;
  }

  void acked(AttachedOutlet from, List<EventRef> refs) {
    long now = ctx.clock().nowNs();
    for (EventRef ref : refs) {
      InFlight f = table.at(ref);
      if (settle(f)) {
        ctx.metrics().dispatchToAck.record(Math.max(0, now - f.firedAtNs), TimeUnit.NANOSECONDS);
      }
      // Unknown to this manager (fired before a restart, say): the database decides.
      acks.accept(Completion.ack(ref, from));
    }
  }

  /**
   * Acks the receiver applied in its own transaction (same CAS as ours) and committed: the row is
   * acked already, so the event leaves the in-flight table without an UPDATE, a retry at its
   * deadline or a stale ack. A receiver that claims a commit that did not happen costs only that
   * event's time: the row is still fired, and the old-event collector returns it to pending after
   * its ack deadline. The dispatch-to-ack time is measured from the fire the entry holds, not from
   * its deadline back: an in-place change of ack_wait applies to later fires only.
   */
  void committed(AttachedOutlet from, List<EventRef> refs) {
    long now = ctx.clock().nowNs();
    GroupNews groups = new GroupNews();
    for (EventRef ref : refs) {
      InFlight f = table.at(ref);
      // Children of event groups acked in the receivers' transactions: their groups may complete.
      groups.ended(ref, f);
      if (f == null || f.settling || f.owner != from) {
        continue;
      }
      table.settled(f);
      ledger.free(f);
      feed.left(f.event);
      ctx.metrics().dispatchToAck.record(Math.max(0, now - f.firedAtNs), TimeUnit.NANOSECONDS);
      ctx.metrics().acked.increment();
    }
    groups.tell();
  }

  void nacked(AttachedOutlet from, List<Nack> nacks) {
    long now = ctx.clock().nowNs();
    for (Nack n : nacks) {
      settle(table.at(n.ref()));
      String why = n.why();
      if (n.snooze()) {
        ctx.metrics().snoozed.increment();
        acks.accept(
            Completion.failed(ctx.retry().snoozed(n.ref(), now, n.retryAfterNs(), why), from, why));
      } else {
        ctx.metrics().nacked.increment();
        acks.accept(failed(n.ref(), now, n.retryAfterNs(), from, why));
      }
    }
  }

  /**
   * The outlet gave events back unsent, through no fault of theirs: pending again at once, the fire
   * undone.
   */
  void released(AttachedOutlet from, List<EventRef> refs, String why) {
    long now = ctx.clock().nowNs();
    for (EventRef ref : refs) {
      settle(table.at(ref));
      acks.accept(Completion.released(ref, now, from, why));
    }
  }

  /** Fired rows past their deadline found in the table: ours are handled by {@link #expire}. */
  void orphans(List<EventRef> refs) {
    long now = ctx.clock().nowNs();
    for (EventRef ref : refs) {
      if (!table.isInFlight(ref.id())) {
        acks.accept(expired(ref, now, "orphan (no live owner)"));
      }
    }
  }

  /**
   * Results of acks and releases from the ack batcher. An event leaves the in-flight table when a
   * change to it applied, or when none applied: then the table no longer shows it fired at that
   * epoch (another path settled it) and this manager must not go on holding it. One released to
   * pending goes back into the window at its retry time.
   */
  void settled(List<Completion> done, List<CasOutcome> outcomes) {
    Set<Long> applied = new HashSet<>();
    for (int i = 0; i < done.size(); i++) {
      if (outcomes.get(i) == CasOutcome.APPLIED) {
        applied.add(done.get(i).ref().id());
      }
    }
    GroupNews groups = new GroupNews();
    for (int i = 0; i < done.size(); i++) {
      Completion c = done.get(i);
      InFlight f = table.at(c.ref());
      boolean ok = outcomes.get(i) == CasOutcome.APPLIED;
      if (ok && (c.kind() == Completion.Kind.ACK || c.dead())) {
        // Children of event groups acked or dead: their groups may complete now.
        groups.ended(c.ref(), f);
      }
      if (f == null || (!ok && applied.contains(f.event.boxedId))) {
        continue; // not ours; or another change to the same event in this batch applied
      }
      table.settled(f);
      ledger.free(f);
      if (ok && c.snooze()) {
        // Read again when due, with the count the row now holds (a snooze past max_snoozes
        // was a failed attempt instead); an ordered key stays its.
        feed.letGo(f.event);
      } else if (ok && c.kind() == Completion.Kind.RELEASE && !c.dead()) {
        feed.keep(f.event.retry(c.epochAfter(), c.retryAtNs()));
      } else {
        feed.left(f.event);
      }
    }
    groups.tell();
  }

  /**
   * The children of event groups that ended (acked, dead) in one call: the keys of those this queue
   * held (their rows' {@code group_key}, read by the poll), the ids of the others (the group closer
   * reads their keys from the table).
   */
  private final class GroupNews {
    private final Set<String> keys = new HashSet<>();
    private final List<Long> ids = new java.util.ArrayList<>();

    void ended(EventRef ref, InFlight f) {
      if (!ctx.table().hasGroupKey()) {
        return;
      }
      if (f == null) {
        ids.add(ref.id());
      } else if (f.event.columns.get(QueueColumns.GROUP_KEY) instanceof String key) {
        keys.add(key);
      }
    }

    void tell() {
      if (!keys.isEmpty()) {
        ctx.groups().childrenSettled(keys);
      }
      if (!ids.isEmpty()) {
        ctx.groups().settled(ctx.table(), ids);
      }
    }
  }
}
