package dev.sluice.db.store;

import dev.sluice.db.EventState;
import dev.sluice.db.QueueTable;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The event groups of one shard ({@code sluice_group}; README, "Event groups"): the reads the group
 * closer, the queues' polls, the CLI and the metrics make, and the leader's writes ({@link #seal},
 * {@link #complete}, {@link #purgeCompleted}), each conditioned on the leader's {@link Fence} and,
 * for an event, a compare-and-set on its epoch.
 */
public interface GroupStore {

  /**
   * A table of the shard as the group checks see it.
   *
   * @param grouped whether it holds children (a {@code group_key} column)
   * @param stateIndexed whether its group index is earlier versions' ({@code group_key}, {@code
   *     state}) rather than ({@code group_key}): the checks read it differently ({@link
   *     GroupSql#probes})
   * @param groupIndex the name of its group index (an index that starts with {@code group_key}),
   *     which the checks name; null when it has none
   */
  public record Table(
      String name, boolean stateIsEnum, boolean grouped, boolean stateIndexed, String groupIndex) {
    Object stateValue(EventState s) {
      return stateIsEnum ? s.sqlName() : s.code();
    }

    EventState decode(Object v) {
      if (v instanceof Number n) {
        return EventState.ofCodeOrNull(n.longValue());
      }
      return v == null ? null : EventState.ofNameOrNull(String.valueOf(v));
    }
  }

  /** One group's row. */
  public record Group(
      String key,
      String state,
      String completionQueue,
      long completionId,
      long completionEpoch,
      String onDead,
      long sealedNs,
      Long completedNs,
      long acked,
      long dead,
      long cancelled) {
    public boolean completed() {
      return GroupSql.COMPLETED.equals(state);
    }

    /** Whether a dead child completes the group at once ({@code group_on_dead=fail_fast}). */
    public boolean failFast() {
      return GroupSql.FAIL_FAST.equals(onDead);
    }

    /**
     * The rule of completion: no child pending or fired ({@code open}), or, {@code fail_fast}, one
     * dead.
     */
    boolean mayComplete(boolean open, boolean dead) {
      return !open || (failFast() && dead);
    }
  }

  /** Children of a group by state, over every grouped table of the shard. */
  public record ChildCounts(long pending, long fired, long acked, long dead, long cancelled) {
    public long total() {
      return pending + fired + acked + dead + cancelled;
    }
  }

  /** What {@link #seal} did. */
  public enum Sealed {
    /** The group's row was written and the completion event held. */
    SEALED,
    /** The completion event changed since it was read: nothing was written. */
    CHANGED,
    /** The group has a row already (another completion event, or this one's): nothing written. */
    TAKEN
  }

  /** An open event group: sealed {@code ageMs} ago (database clock), and its completion event. */
  record OpenGroup(String key, String completionQueue, long completionId, long ageMs) {}

  /** How many groups are open (sealed, not completed), and the oldest few. */
  record OpenGroups(long open, List<OpenGroup> oldest) {}

  // ---------------------------------------------------------------- reads

  /** Now on the shard's clock (as {@code sealed_ns} is), ns since the epoch. */
  long nowNs();

  /** The rows of the groups among {@code keys} that have one. */
  Map<String, Group> find(Collection<String> keys);

  /** The distinct group keys of the rows {@code ids} of {@code table} (a grouped table). */
  Set<String> keysOf(QueueTable table, Collection<Long> ids);

  /**
   * The sealed groups among {@code keys} that may complete: no child pending or fired in any
   * grouped table, or, for a {@code fail_fast} group, a dead child. Each group's check is a probe
   * per grouped table on its {@code group_key} index for its first open child, from where the last
   * check of the group found one ({@link GroupSql#probes}); a group it passes is counted whole
   * before it completes ({@link #complete}).
   */
  List<String> completable(Collection<String> keys);

  /**
   * Where a sweep of the sealed groups stands: after the group {@code key}, sealed at {@code
   * sealedNs}.
   */
  record SweepMark(long sealedNs, String key) {}

  /**
   * A page of a sweep: the groups of it that may complete, and where the next page starts (null
   * when this one reached the newest sealed group: the next sweep starts from the oldest).
   */
  record SweepPage(List<String> completable, SweepMark next) {}

  /**
   * The sealed groups after {@code after} (null: from the oldest), oldest first, up to {@code
   * limit} of them, checked as {@link #completable} checks them.
   */
  SweepPage sweep(SweepMark after, int limit);

  /** The children of group {@code key} by state, over every grouped table (a count: operators). */
  ChildCounts childCounts(String key);

  /** How many groups are sealed and not completed (one read of the state index). */
  long openCount();

  /** Up to {@code limit} sealed groups, oldest first (for the status page and the CLI). */
  List<Group> open(int limit);

  /**
   * The oldest {@code limit} open groups and how many are open, in one statement on the ({@code
   * state}, {@code sealed_ns}) index; none (and 0) when the shard has no groups table yet.
   */
  OpenGroups openGroups(int limit);

  /** The tables of the shard that hold children (a {@code group_key} column), read now. */
  List<Table> grouped();

  // ---------------------------------------------------------------- the leader (fenced)

  /**
   * Seals group {@code key} with its completion event {@code ref} of {@code queue}: inserts the
   * group's row and holds the completion event (a compare-and-set on its epoch, of a pending row
   * not held), in one transaction, fenced.
   *
   * @throws FencedOffException when the fence refused it: nothing was written
   */
  Sealed seal(QueueTable queue, EventRef ref, String key, boolean failFast, long nowNs);

  /**
   * Seals each of {@code byKey} (a group key and its completion event of {@code queue}) as {@link
   * #seal} does, all of them in one transaction of two statements: when each can be sealed (no row
   * yet, its event unchanged). Otherwise nothing is written and the caller seals each on its own,
   * which tells them apart (and keeps a fault to its group).
   *
   * @return whether they were sealed (else nothing was written)
   * @throws FencedOffException when the fence refused it: nothing was written
   */
  boolean sealTogether(QueueTable queue, Map<String, EventRef> byKey, boolean failFast, long nowNs);

  /**
   * Completes group {@code key} if it is sealed and may complete: locks its row, checks again,
   * counts its children by state, marks it completed with the counts and releases its completion
   * event ({@code time_next - HELD_NS}, a compare-and-set on the epoch it was held at), in one
   * transaction, fenced.
   *
   * @return the completed group, or null when it was not sealed or may not complete (yet)
   * @throws FencedOffException when the fence refused it: nothing was written
   */
  Group complete(String key, long nowNs);

  /**
   * {@link #complete} for each of {@code keys}, up to 200 groups per transaction (a fixed number of
   * statements per transaction, whatever the number of groups), while {@code goOn} holds; the
   * shard's tables are read from the catalog at most once, and only when the list cached was read
   * before the last of the groups was sealed (a table created later holds none of their children:
   * they were committed before the completion event).
   *
   * @return the groups completed, in key order within each transaction
   * @throws FencedOffException when the fence refused a transaction: nothing of it was written, the
   *     transactions before it stay committed
   */
  List<Group> completeAll(List<String> keys, long nowNs, java.util.function.BooleanSupplier goOn);

  /**
   * Deletes up to {@code limit} rows of groups completed before {@code beforeNs} whose completion
   * event, of {@code queue}, is no longer pending or fired. Fenced.
   */
  int purgeCompleted(QueueTable queue, long beforeNs, int limit);
}
