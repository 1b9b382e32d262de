package dev.sluice.core.queue.dispatch;

import dev.sluice.core.outlet.Nack;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.PollPosition;
import java.util.List;
import java.util.Map;

/**
 * What other threads tell a queue's dispatcher: each command is posted to its {@link Inbox} by the
 * thread that learnt it, and applied in posting order on the dispatcher thread, between dispatch
 * rounds, by one switch ({@code Dispatcher.handle}). A command is plain data, built and then never
 * changed by its sender; what it carries belongs to the dispatcher thread from then on.
 *
 * <p>Who posts what: the poller {@link Polled}, {@link Trim} and {@link Orphans} (the retry
 * collector runs on its thread); the firer {@link Fired}; the ack batcher {@link Settled}; the
 * outlets, through the queue's {@code OutletOutcomes}, {@link Acked}, {@link Committed}, {@link
 * Nacked} and {@link Released}; the queue's manager {@link Attach}, {@link Detach}, {@link
 * Cancelled}, {@link Alter}, {@link StopSending} and {@link ReleaseAll}.
 */
public sealed interface DispatcherCommand
    permits DispatcherCommand.Polled,
        DispatcherCommand.Fired,
        DispatcherCommand.Settled,
        DispatcherCommand.Orphans,
        DispatcherCommand.Trim,
        DispatcherCommand.Attach,
        DispatcherCommand.Detach,
        DispatcherCommand.Acked,
        DispatcherCommand.Committed,
        DispatcherCommand.Nacked,
        DispatcherCommand.Released,
        DispatcherCommand.Extended,
        DispatcherCommand.Cancelled,
        DispatcherCommand.Alter,
        DispatcherCommand.StopSending,
        DispatcherCommand.ReleaseAll {

  /**
   * What one poll hands the dispatcher (the window takes it in: {@code WindowFeed.onPolled}): its
   * rows as window events, and what the dispatcher needs to judge them. Built on the poller's
   * thread.
   *
   * @param events the rows read, as window events, in the order read
   * @param settledSeqAtStart the dispatcher's settle count when the poll began: a row settled after
   *     that may still show pending in the poll's snapshot
   * @param full the poll came back with as many rows as it asked for: more may wait on disk
   * @param global the poll over all tenants (rows a tenant's cap turned away tell the poller to
   *     poll tenant by tenant)
   * @param part the most events any tenant may hold after it (its own cap still applies)
   * @param tenantStarts for a per-tenant round, where each tenant's read started ({@link
   *     PollPosition#FIRST}: from its oldest row); empty for other polls
   */
  record Polled(
      List<CachedEvent> events,
      long settledSeqAtStart,
      boolean full,
      boolean global,
      int part,
      Map<String, PollPosition> tenantStarts)
      implements DispatcherCommand {

    /** A page of the poll over all tenants. */
    public static Polled sweep(List<CachedEvent> events, long settledSeqAtStart, boolean full) {
      return new Polled(events, settledSeqAtStart, full, true, Integer.MAX_VALUE, Map.of());
    }

    /** The poll of recently due rows between per-tenant rounds. */
    public static Polled recent(List<CachedEvent> events, long settledSeqAtStart, int part) {
      return new Polled(events, settledSeqAtStart, false, false, part, Map.of());
    }

    /** One statement of a per-tenant round. */
    public static Polled tenants(
        List<CachedEvent> events,
        long settledSeqAtStart,
        int part,
        Map<String, PollPosition> tenantStarts) {
      return new Polled(events, settledSeqAtStart, false, false, part, Map.copyOf(tenantStarts));
    }
  }

  /**
   * A batch came back from the firer, with each event's outcome or the error: fired events go in
   * flight and are sent, unless their outlet left or sending stopped meanwhile.
   */
  record Fired(FireBatch batch) implements DispatcherCommand {}

  /**
   * The database's answers to acks and releases written by the ack batcher, {@code outcomes[i]} for
   * {@code done[i]}: see {@code Settlements.settled}.
   */
  record Settled(List<Completion> done, List<CasOutcome> outcomes) implements DispatcherCommand {}

  /** Fired rows past their deadline found in the table: ours time out on their own. */
  record Orphans(List<EventRef> refs) implements DispatcherCommand {}

  /**
   * The poller's per-tenant round found tenants waiting on disk and no room for them: each tenant
   * in {@code keep} gives up its window events beyond that many (see {@code WindowFeed.trim}).
   */
  record Trim(Map<String, Integer> keep) implements DispatcherCommand {}

  /** An outlet starts taking this queue's events on this shard. */
  record Attach(AttachedOutlet outlet) implements DispatcherCommand {}

  /** The stream ended or broke: what it held is released at once, not after ack_wait. */
  record Detach(AttachedOutlet outlet, String why) implements DispatcherCommand {}

  /** An outlet's acks, to be written. */
  record Acked(AttachedOutlet from, List<EventRef> refs) implements DispatcherCommand {}

  /** Acks the receiver committed itself: see {@code Settlements.committed}. */
  record Committed(AttachedOutlet from, List<EventRef> refs) implements DispatcherCommand {}

  /** An outlet's nacks: failed attempts, back to pending with backoff or dead. */
  record Nacked(AttachedOutlet from, List<Nack> nacks) implements DispatcherCommand {}

  /** The outlet gave events back through no fault of theirs: pending again at once. */
  record Released(AttachedOutlet from, List<EventRef> refs, String why)
      implements DispatcherCommand {}

  /**
   * Receivers extended these attempts' deadlines (the table is being written): each in-flight
   * attempt's timeout moves there, bounded by its own fire + {@code maxHoldNs}.
   */
  record Extended(Map<EventRef, Long> deadlines, long maxHoldNs) implements DispatcherCommand {}

  /** Events cancelled in the table: they leave the window. */
  record Cancelled(List<Long> ids) implements DispatcherCommand {}

  /**
   * The table's comment changed the options that apply in place (ack_wait for later fires,
   * max_attempts, max_concurrency, max_qps); what is in flight keeps its deadline.
   */
  record Alter(QueueOptions options) implements DispatcherCommand {}

  /** Graceful stop, step 1: nothing new is sent; acks, nacks and timeouts still apply. */
  record StopSending() implements DispatcherCommand {}

  /** Graceful stop, step 2: whatever outlets still hold is released, without backoff. */
  record ReleaseAll(String why) implements DispatcherCommand {}
}
