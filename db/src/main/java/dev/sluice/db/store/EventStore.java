package dev.sluice.db.store;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The narrow port through which a queue manager reads and changes one queue table. Every state
 * change is a compare-and-set on (id, state, epoch): callers pass the epoch they believe current
 * and learn per event whether the change applied.
 *
 * <p>Implementations are thread-safe; each call uses its own pooled connection.
 */
public interface EventStore {

  /** The queue table's name. */
  String queue();

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

  /** Fired events whose ack deadline is at or before {@code beforeNs}, oldest first. */
  List<EventRef> expiredFired(long beforeNs, int limit);

  /** pending → cancelled; outcome per id (STALE: exists but not pending). */
  default Map<Long, CasOutcome> cancel(Collection<Long> ids, long nowNs) {
    return cancel(ids, nowNs, t -> true);
  }

  /**
   * pending → cancelled for the events whose tenant {@code tenantAllowed} accepts; an event of
   * another tenant is answered UNKNOWN, as an id that does not exist, and not changed.
   */
  Map<Long, CasOutcome> cancel(
      Collection<Long> ids, long nowNs, java.util.function.Predicate<String> tenantAllowed);

  /** Deletes up to {@code limit} acked or cancelled events settled before {@code beforeNs}. */
  int purge(long beforeNs, int limit);

  /**
   * Deletes up to {@code limit} acked or cancelled events without a dedup key ({@code dedup_key}
   * NULL) settled in [{@code fromNs}, {@code beforeNs}): the purge of a queue whose keyed rows are
   * kept longer ({@code dedup_window}). It reads that range of the (state, time_next) index and
   * skips the keyed rows in it, so keep the range short. Only for a table with the column.
   */
  int purgeUnkeyed(long fromNs, long beforeNs, int limit);

  /** Row counts by state; scans the poll index, so not for hot paths. */
  StateCounts counts();

  /**
   * The due time of the earliest pending event, if any: one seek on the poll index, cheap at any
   * table size (unlike {@link #counts}).
   */
  java.util.OptionalLong oldestPendingDueNs();

  /** Row counts by tenant and state, busiest tenants first; scans the table (operators only). */
  List<TenantCounts> countsByTenant(int limit);

  /** The current epoch of each of {@code ids} that exists (for an operator's CAS by id). */
  Map<Long, Long> epochs(Collection<Long> ids);

  /**
   * Up to {@code limit} dead events with {@code id > afterId}, by id (for paging); {@link
   * Long#MIN_VALUE} starts from the first (ids may be 0 or negative).
   */
  List<EventRow> listDead(long afterId, int limit);

  /**
   * dead → pending for each ref whose epoch is current, with {@code time_next} = the database's
   * now. The epoch is kept (a late answer to an earlier attempt stays stale), so the event gets
   * another {@code max_attempts} attempts.
   */
  Map<EventRef, CasOutcome> replayDead(Collection<EventRef> refs);

  /** One event read by id, whatever its state (for operators: {@code ShowEvent}). */
  record Found(dev.sluice.db.EventState state, EventRow row) {}

  /** The event {@code id} in any state, or empty when there is none (or its id is out of range). */
  java.util.Optional<Found> find(long id);

  /** Deletes each dead event whose epoch is current. */
  Map<EventRef, CasOutcome> purgeDead(Collection<EventRef> refs);

  /**
   * pending or fired → dead for each ref whose epoch is current (the epoch is kept), recording its
   * reason where {@code sluice dead list} shows it, in the same transaction. For events Sluice
   * cannot serve (a row it cannot read or fire); a reason of any length or content is stored,
   * shortened if need be. Returns the outcome per ref (STALE: not pending or fired at that epoch).
   */
  Map<EventRef, CasOutcome> markDead(Map<EventRef, String> reasons);

  /** Who hears of rows the store skipped or made dead because it cannot serve them. */
  default void onBadRow(BadRowListener listener) {}

  /** The recorded reason of each of {@code ids} that is dead with one. */
  Map<Long, String> deadReasons(Collection<Long> ids);

  /** The database server's clock, ns since the epoch. */
  long serverTimeNs();

  // ---------------------------------------------------------------- ordered queues

  /**
   * Ordered queues: these pending rows wait behind an earlier event of their key, out of every
   * poll's range ({@code time_next + HELD_NS}; a compare-and-set on the epoch, of rows not held
   * yet).
   */
  Map<EventRef, CasOutcome> hold(Collection<EventRef> refs);

  /** Held rows whose turn came: their own {@code time_next} again (a CAS on the epoch). */
  Map<EventRef, CasOutcome> unhold(Collection<EventRef> refs);

  /**
   * Each key's first pending row, held or not, with its {@link KeyPlace}; for a queue that is one
   * key, its first pending row whatever {@code keys} holds. One statement.
   */
  List<EventRow> firstPendingOfKeys(Collection<Object> keys);

  /**
   * Up to {@code limit} values of the ordering column that have held rows (raw column values; one
   * empty string for a queue ordered as one key).
   */
  List<Object> heldKeys(int limit);

  /** The queue is no longer ordered: unholds up to {@code limit} held rows; returns how many. */
  int unholdAll(int limit);

  /** Up to {@code limit} keys halted at a dead event, by the dead event's id. */
  List<HaltedKey> haltedKeys(int limit);

  /** How many keys are halted, up to {@code limit}: {@link #haltedKeys} without the counts. */
  int haltedKeyCount(int limit);

  /**
   * Skips a halted key's dead event: it becomes {@code cancelled} (a compare-and-set on its epoch;
   * an operator's command), and the next event of its key, if its turn has come, is released.
   */
  CasOutcome skipDead(EventRef ref, long nowNs);
}
