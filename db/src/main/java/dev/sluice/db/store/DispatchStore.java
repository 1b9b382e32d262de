package dev.sluice.db.store;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The queue engine's port to one queue table: the poller's reads, the firer's fire, the ack
 * batcher's acks and releases, the retry collector's orphans, and the events made dead because
 * Sluice cannot serve them.
 */
public interface DispatchStore extends QueueStore {

  /** Up to {@code limit} pending events with {@code time_next <= dueBeforeNs}, oldest first. */
  List<EventRow> pollPending(long dueBeforeNs, int limit);

  /**
   * Like {@link #pollPending}, continuing after (afterTimeNextNs, afterId) in poll order: the next
   * page of a sweep, without reading again the rows already read.
   */
  List<EventRow> pollPendingAfter(long dueBeforeNs, long afterTimeNextNs, long afterId, int limit);

  /**
   * Several tenants' pending events due by {@code dueBeforeNs}, each read as its {@link TenantRead}
   * says (up to its limit, oldest first, after its position if it has one), in as few round trips
   * as the implementation can (one, for the JDBC store).
   */
  List<EventRow> pollTenants(List<TenantRead> reads, long dueBeforeNs);

  /**
   * Up to {@code limit} tenants that have pending events, in tenant order, each with its earliest
   * due time. One statement; on the (state, tenant, time_next) index it is a loose index scan, one
   * seek per tenant: its cost grows with the number of tenants, not with the backlog.
   */
  List<TenantDue> pendingTenants(int limit);

  /**
   * The same, for the tenants after {@code afterTenant} in tenant order (null: from the first): the
   * next page of a listing, so that every tenant is reached however many there are.
   */
  List<TenantDue> pendingTenantsAfter(String afterTenant, int limit);

  /** A tenant with pending events and the due time of its earliest one. */
  record TenantDue(String tenant, long minDueNs) {}

  /**
   * pending → fired for each ref whose epoch is current: epoch + 1 and {@code time_next =
   * deadlineNs} (the ack deadline). Returns the outcome per ref.
   */
  Map<EventRef, CasOutcome> fire(Collection<EventRef> refs, long deadlineNs);

  /**
   * pending → fired for events as the poll read them, in one transaction: each row is locked by
   * primary key without waiting ({@code FOR UPDATE SKIP LOCKED}: a row an application holds locked
   * is skipped, and delays nobody), and fires only if it is still pending at the ref's epoch with
   * the ref's {@code time_next} (a row rescheduled since the poll is left for the next poll). A row
   * that cannot be fired — its epoch at the column's maximum, a column the driver cannot read — is
   * made dead with its reason in the same transaction. The ack deadline is asked of {@code
   * deadlineNs} once the rows are locked, just before they are written. Either everything here
   * commits or nothing does, and an abandoned call never applies later.
   */
  FireResult fireAsPolled(List<FireRef> refs, java.util.function.LongSupplier deadlineNs);

  /** fired → acked for each ref (epoch as fired); {@code time_acked = time_next = nowNs}. */
  Map<EventRef, CasOutcome> ack(Collection<EventRef> refs, long nowNs);

  /**
   * fired → pending at each release's time, or → dead. An {@linkplain Release#unsent unsent} one
   * also takes the epoch back by one (the fire is undone), so that it spends no attempt.
   */
  Map<EventRef, CasOutcome> release(Collection<Release> releases);

  /**
   * Moves the deadline of fired events forward: for each, one compare-and-set {@code UPDATE ... SET
   * time_next = deadline WHERE id = ? AND epoch = ? AND state = fired AND time_next < deadline};
   * when it changes nothing, the row is read to tell an event already held that long (APPLIED, with
   * its deadline) from a stale attempt or an unknown id. Unfenced: a deadline moved by a manager
   * that lost its lease is still the holder's, and the CAS on the epoch keeps it to that attempt.
   */
  Map<EventRef, Extension.Outcome> extend(Collection<Extension> extensions);

  /** Fired events whose ack deadline is at or before {@code beforeNs}, oldest first. */
  List<EventRef> expiredFired(long beforeNs, int limit);

  /**
   * {@code key_max_in_flight}: the fired rows of each key (the {@code ordering_column}'s value, a
   * Long or a String), of {@code keys} only (null: every key with fired rows), leaving out the ids
   * in {@code except}. One statement on the (key, state) index.
   */
  Map<Object, Integer> firedPerKey(Collection<Object> keys, Collection<Long> except);

  /** A key as {@link #firedPerKey} gives it: an integer as a Long, anything else as its text. */
  static Object normalKey(Object v) {
    if (v == null) {
      return null;
    }
    return v instanceof Number n ? (Object) n.longValue() : v.toString();
  }

  /**
   * pending or fired → dead for each ref whose epoch is current (the epoch is kept), recording its
   * reason where {@code sluice dead list} shows it, in the same transaction. For events Sluice
   * cannot serve (a row it cannot read or fire); a reason of any length or content is stored,
   * shortened if need be. Returns the outcome per ref (STALE: not pending or fired at that epoch).
   */
  Map<EventRef, CasOutcome> markDead(Map<EventRef, String> reasons);

  /** Who hears of rows the store skipped or made dead because it cannot serve them. */
  default void onBadRow(BadRowListener listener) {}

  /**
   * An ordered queue's polls give the rows whose id {@code known} accepts as first of their key
   * without reading their key's place again: the caller holds them already as their key's head, so
   * the place would change nothing it does. {@code known} is called on the polling thread. Set once
   * by the queue engine; until then every row's place is read.
   */
  default void knownHeads(java.util.function.LongPredicate known) {}
}
