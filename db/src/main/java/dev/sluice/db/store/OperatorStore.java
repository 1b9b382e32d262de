package dev.sluice.db.store;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Operators' port to one queue table (the admin actions, the CLI, {@code QueueEngine.cancel}):
 * show, cancel, list, replay and purge dead events, list halted keys and skip their dead event.
 * These writes are never fenced: each is a compare-and-set on the epoch, right whoever leads.
 */
public interface OperatorStore extends QueueStore {

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

  /** The current epoch of each of {@code ids} that exists (for an operator's CAS by id). */
  Map<Long, Long> epochs(Collection<Long> ids);

  /**
   * Up to {@code limit} dead events with {@code id > afterId}, by id (for paging); {@link
   * Long#MIN_VALUE} starts from the first (ids may be 0 or negative).
   */
  List<EventRow> listDead(long afterId, int limit);

  /**
   * Dead rows whose id is above 2^63 - 1 (a {@code BIGINT UNSIGNED} id column), which {@link
   * #listDead} cannot return, with their recorded reasons; empty for a signed id column.
   */
  List<OutOfRangeRow> deadOutOfRange(int limit);

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

  /** The recorded reason of each of {@code ids} that is dead with one. */
  Map<Long, String> deadReasons(Collection<Long> ids);

  /** Up to {@code limit} keys halted at a dead event, by the dead event's id. */
  List<HaltedKey> haltedKeys(int limit);

  /**
   * Skips a halted key's dead event: it becomes {@code cancelled} (a compare-and-set on its epoch;
   * an operator's command), and the next event of its key, if its turn has come, is released.
   */
  CasOutcome skipDead(EventRef ref, long nowNs);
}
