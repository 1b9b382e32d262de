package dev.sluice.core.outlet;

import java.util.List;
import java.util.Map;

/**
 * One fired event handed to an {@link Outlet}: what a destination needs to send it and what a
 * consumer needs to deduplicate it ({@code shard}, {@code queue}, {@code id}, {@code epoch}).
 *
 * <p>{@code columns} are the row's user columns as plain Java values, in table order: {@code null},
 * {@link Long}, {@link Integer}, {@link java.math.BigInteger} (unsigned BIGINT), {@link Double},
 * {@link Float}, {@link java.math.BigDecimal}, {@link Boolean}, {@code byte[]}, {@link
 * dev.sluice.db.store.JsonText}, {@link java.time.LocalDate}, {@link java.time.LocalDateTime},
 * {@link java.time.Instant}, {@link java.time.Duration} or {@link String}. Each outlet encodes them
 * for its own wire.
 *
 * @param epoch the attempt this delivery is (1 for the first); an ack or nack must carry it
 * @param dueNs when the event was due (ns since the epoch, database clock)
 * @param firedNs when this attempt was fired (ns since the epoch, database clock)
 * @param workClass the event's work class ("" when none)
 * @param actorPath the actor path under the tenant (may be empty)
 * @param orderingKey for an ordered queue, the event's key as text (the ordering column's value;
 *     empty for a queue ordered as one key); null when the queue is not ordered or the key is NULL
 * @param group for a group's completion event, what became of its children; null otherwise
 * @param lastAttempt whether a failure of this attempt makes the event dead (max_attempts reached)
 * @param deadlineNs when the manager takes the event back unless acked or extended (0: unknown)
 */
public record Delivery(
    String shard,
    String queue,
    long id,
    long epoch,
    String tenant,
    int priority,
    long dueNs,
    long createdNs,
    long firedNs,
    String workClass,
    List<String> actorPath,
    Map<String, Object> columns,
    String orderingKey,
    GroupOutcome group,
    boolean lastAttempt,
    long deadlineNs) {

  /** A delivery without a known deadline (0): channels' and tests' deliveries. */
  public Delivery(
      String shard,
      String queue,
      long id,
      long epoch,
      String tenant,
      int priority,
      long dueNs,
      long createdNs,
      long firedNs,
      String workClass,
      List<String> actorPath,
      Map<String, Object> columns,
      String orderingKey,
      GroupOutcome group,
      boolean lastAttempt) {
    this(
        shard,
        queue,
        id,
        epoch,
        tenant,
        priority,
        dueNs,
        createdNs,
        firedNs,
        workClass,
        actorPath,
        columns,
        orderingKey,
        group,
        lastAttempt,
        0);
  }

  /** A delivery of an event that completes no group. */
  public Delivery(
      String shard,
      String queue,
      long id,
      long epoch,
      String tenant,
      int priority,
      long dueNs,
      long createdNs,
      long firedNs,
      String workClass,
      List<String> actorPath,
      Map<String, Object> columns,
      String orderingKey) {
    this(
        shard,
        queue,
        id,
        epoch,
        tenant,
        priority,
        dueNs,
        createdNs,
        firedNs,
        workClass,
        actorPath,
        columns,
        orderingKey,
        null,
        false);
  }

  /** A delivery of an unordered queue's event. */
  public Delivery(
      String shard,
      String queue,
      long id,
      long epoch,
      String tenant,
      int priority,
      long dueNs,
      long createdNs,
      long firedNs,
      String workClass,
      List<String> actorPath,
      Map<String, Object> columns) {
    this(
        shard, queue, id, epoch, tenant, priority, dueNs, createdNs, firedNs, workClass, actorPath,
        columns, null, null, false);
  }

  /** "queue orders_events, shard s1, event 42 (attempt 3)": for errors and logs. */
  public String describe() {
    return "queue " + queue + ", shard " + shard + ", event " + id + " (attempt " + epoch + ")";
  }
}
