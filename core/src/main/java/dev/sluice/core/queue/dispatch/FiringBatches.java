package dev.sluice.core.queue.dispatch;

import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.store.CasOutcome;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dispatcher's batches out at the firer: handed to its queue ({@link #handOut}), and what
 * becomes of each when it comes back in a {@link DispatcherCommand.Fired} ({@link #returned}): its
 * fired events go in flight and are sent. Owned by the dispatcher thread: no locks; only a queue
 * stopped by leadership loss hands it to the stopping thread ({@link #abandon}).
 */
final class FiringBatches {
  private static final Logger log = LoggerFactory.getLogger(FiringBatches.class);

  private final QueueContext ctx;
  private final InFlightTable table;
  private final CreditLedger ledger;
  private final WindowFeed feed;
  private final Settlements settlements;
  private final PublishedStats stats;

  /** The firer's queue. */
  private final Consumer<FireBatch> fire;

  /**
   * Batches handed to the firer whose {@link DispatcherCommand.Fired} has not been handled: their
   * credits are taken. Only a queue abandoned mid-fire leaves some here for good (see {@link
   * #abandon}).
   */
  private final Set<FireBatch> held = Collections.newSetFromMap(new IdentityHashMap<>());

  FiringBatches(
      QueueContext ctx,
      InFlightTable table,
      CreditLedger ledger,
      WindowFeed feed,
      Settlements settlements,
      PublishedStats stats,
      Consumer<FireBatch> fire) {
    this.ctx = ctx;
    this.table = table;
    this.ledger = ledger;
    this.feed = feed;
    this.settlements = settlements;
    this.stats = stats;
    this.fire = fire;
  }

  /** Hands {@code b} to the firer; its events' credits stay taken until it comes back. */
  void handOut(FireBatch b) {
    held.add(b);
    fire.accept(b);
  }

  /**
   * A batch came back from the firer. Fired events go in flight and are sent — unless their outlet
   * left or dispatch stopped meanwhile: those are released at once, without backoff (they were
   * never sent). A batch whose UPDATE failed goes back to the window: false (the dispatcher then
   * pauses a moment).
   */
  boolean returned(FireBatch b, boolean dispatching) {
    held.remove(b);
    List<CachedEvent> events = b.events;
    table.fireReturned(events);
    if (b.error != null) {
      // Unknown whether it committed. Put the events back: if it did, their epoch is stale and
      // the next fire's CAS drops them; the rows come back through the retry collector.
      for (int i = 0; i < events.size(); i++) {
        ledger.unassign(b.owners.get(i), events.get(i));
        feed.keep(events.get(i));
      }
      ctx.metrics().dbErrors.increment();
      log.warn(
          "{}: firing {} events failed, retrying shortly: {}",
          ctx.where(),
          events.size(),
          b.error.toString());
      stats.publish();
      return false;
    }
    long now = b.firedAtNs;
    long mono = ctx.clock().monoNs();
    Map<AttachedOutlet, List<Delivery>> out = new LinkedHashMap<>();
    int sent = 0;
    for (int i = 0; i < events.size(); i++) {
      CachedEvent e = events.get(i);
      AttachedOutlet r = b.owners.get(i);
      if (b.outcome.get(b.refs.get(i)) != CasOutcome.APPLIED) {
        ledger.unassign(r, e);
        if (b.locked.contains(e.boxedId)) {
          table.park(e, now);
        } else if (b.changed.contains(e.boxedId)) {
          feed.letGo(e); // rescheduled or changed since the poll: read again, as it is now
        } else {
          ctx.metrics().casMisses.increment();
          feed.left(e); // acked, cancelled or fired elsewhere meanwhile
        }
        continue;
      }
      InFlight f = table.fired(e.fired(), r, now, b.firedDeadlineNs);
      if (!dispatching || !ledger.attached(r)) {
        settlements.unsent(f, now);
        continue;
      }
      long waitNs = Math.max(0, now - e.dueNs);
      ctx.metrics().dueToDispatch.record(waitNs, TimeUnit.NANOSECONDS);
      ledger.dispatched(e.tenant, waitNs, mono);
      Map<String, Object> columns = b.columns.getOrDefault(e.boxedId, e.columns);
      out.computeIfAbsent(r, k -> new ArrayList<>())
          .add(
              f.delivery(
                  ctx.shard(),
                  ctx.queue(),
                  columns,
                  ctx.retry().isLastAttempt(f.epoch - snoozes(columns))));
      sent++;
    }
    ctx.metrics().dispatched.increment(sent);
    out.forEach(AttachedOutlet::deliver);
    stats.inFlightChanged();
    return true;
  }

  /** The event's snoozes as its row held them when read (0 without the column): see Release. */
  private long snoozes(Map<String, Object> columns) {
    if (!ctx.table().hasSnoozes()) {
      return 0;
    }
    return columns.get(dev.sluice.client.QueueColumns.SNOOZES) instanceof Number n
        ? n.longValue()
        : 0;
  }

  /**
   * Leadership lost: gives back the credits of the batches the firer had not answered for (whether
   * their UPDATE committed or not, their rows come back through the retry collector). Returns how
   * many events that was.
   */
  int abandon() {
    int n = 0;
    for (FireBatch b : held) {
      for (int i = 0; i < b.events.size(); i++) {
        ledger.unassign(b.owners.get(i), b.events.get(i));
        n++;
      }
    }
    held.clear();
    return n;
  }
}
