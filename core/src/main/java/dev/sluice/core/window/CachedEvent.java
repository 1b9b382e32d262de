package dev.sluice.core.window;

import java.util.Map;

/**
 * A pending event held in the window: what the dispatcher needs to order it, fire it (id and the
 * epoch it believes current) and send it (the user columns, converted once).
 */
public final class CachedEvent {
  public final long id;

  /**
   * {@link #id} boxed, once: the key of every map and set the dispatcher keeps events in (window,
   * firing, in flight, recently settled), so that a polled row's checks and an event's moves
   * between them do not box the id again each time.
   */
  public final Long boxedId;

  public final long epoch;
  public final long dueNs;
  public final long createdNs;
  public final int priority;
  public final String tenant;

  /** Actor path segments under the tenant (may be empty). */
  public final java.util.List<String> actorPath;

  /** Work class ("" when none). */
  public final String workClass;

  public final Map<String, Object> columns;

  /**
   * The event's size as sent (an upper bound: its wire form with the largest epoch and fire time),
   * for the window's byte budget and the batch sizes; 0 when unknown (tests).
   */
  final int bytes;

  /**
   * For an ordered queue, the event's key ({@link OrderingKey}): at most one event of a key is in
   * the window or in flight. Null when the queue is not ordered or the key is NULL.
   */
  public final Object orderingKey;

  /** For a group's completion event, what became of the group's children; null otherwise. */
  public final dev.sluice.core.outlet.GroupOutcome group;

  /**
   * Whether the table still shows the row held behind its key ({@code time_next} = {@link #dueNs} +
   * {@code HELD_NS}): an ordered queue's turn hands the key's next row over without releasing it
   * first, and its fire's compare-and-set moves {@code time_next} anyway (see {@code KeyTurns}).
   */
  public final boolean heldInTable;

  public CachedEvent(
      long id,
      long epoch,
      long dueNs,
      long createdNs,
      int priority,
      String tenant,
      java.util.List<String> actorPath,
      String workClass,
      Map<String, Object> columns) {
    this(id, epoch, dueNs, createdNs, priority, tenant, actorPath, workClass, columns, 0);
  }

  public CachedEvent(
      long id,
      long epoch,
      long dueNs,
      long createdNs,
      int priority,
      String tenant,
      java.util.List<String> actorPath,
      String workClass,
      Map<String, Object> columns,
      int bytes) {
    this(
        id, epoch, dueNs, createdNs, priority, tenant, actorPath, workClass, columns, bytes, null,
        null);
  }

  public CachedEvent(
      long id,
      long epoch,
      long dueNs,
      long createdNs,
      int priority,
      String tenant,
      java.util.List<String> actorPath,
      String workClass,
      Map<String, Object> columns,
      int bytes,
      Object orderingKey,
      dev.sluice.core.outlet.GroupOutcome group) {
    this(
        id,
        epoch,
        dueNs,
        createdNs,
        priority,
        tenant,
        actorPath,
        workClass,
        columns,
        bytes,
        orderingKey,
        group,
        false);
  }

  public CachedEvent(
      long id,
      long epoch,
      long dueNs,
      long createdNs,
      int priority,
      String tenant,
      java.util.List<String> actorPath,
      String workClass,
      Map<String, Object> columns,
      int bytes,
      Object orderingKey,
      dev.sluice.core.outlet.GroupOutcome group,
      boolean heldInTable) {
    this.heldInTable = heldInTable;
    this.group = group;
    this.orderingKey = orderingKey;
    this.id = id;
    this.boxedId = id;
    this.epoch = epoch;
    this.dueNs = dueNs;
    this.createdNs = createdNs;
    this.priority = priority;
    this.tenant = tenant;
    this.actorPath = actorPath;
    this.workClass = workClass;
    this.columns = columns;
    this.bytes = bytes;
  }

  /** {@code time_next} as the table shows it: {@link #dueNs}, plus the hold's offset if held. */
  public long tableTimeNextNs() {
    return heldInTable ? dueNs + dev.sluice.db.QueueConvention.HELD_NS : dueNs;
  }

  /**
   * The same event as the table shows it once fired: its fire moved {@code time_next}, so it is no
   * longer held there (a snooze or a release later finds it as any fired event).
   */
  public CachedEvent fired() {
    return heldInTable ? copy(epoch, dueNs) : this;
  }

  /** The same event, pending again at {@code epoch} and due at {@code dueNs}. */
  public CachedEvent retry(long newEpoch, long newDueNs) {
    return copy(newEpoch, newDueNs);
  }

  /** The same event at {@code newEpoch}, due at {@code newDueNs}, not held in the table. */
  private CachedEvent copy(long newEpoch, long newDueNs) {
    return new CachedEvent(
        id,
        newEpoch,
        newDueNs,
        createdNs,
        priority,
        tenant,
        actorPath,
        workClass,
        columns,
        bytes,
        orderingKey,
        group,
        false);
  }

  public long id() {
    return id;
  }

  public long epoch() {
    return epoch;
  }

  public long dueNs() {
    return dueNs;
  }

  public String tenant() {
    return tenant;
  }

  public String workClass() {
    return workClass;
  }

  public int bytes() {
    return bytes;
  }

  public int priority() {
    return priority;
  }
}
