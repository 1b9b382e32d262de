package dev.sluice.db.store;

import java.util.Map;

/**
 * A pending event as the poller read it.
 *
 * @param userColumns the user data columns, by name, in table order, with exact values: null, Long,
 *     BigInteger, Double, BigDecimal, String, {@link JsonText}, byte[], Boolean, LocalDate,
 *     LocalDateTime, Instant or Duration (see {@link dev.sluice.db.ColumnKind})
 * @param keyPlace for an ordered queue's poll, where the row stands in its key; {@link
 *     KeyPlace#FIRST} otherwise
 */
public record EventRow(
    long id,
    long epoch,
    long timeNextNs,
    long timeCreatedNs,
    int priority,
    String tenant,
    String actor,
    String workClass,
    Map<String, Object> userColumns,
    KeyPlace keyPlace) {

  /** An unordered row (or one read without its key's place). */
  public EventRow(
      long id,
      long epoch,
      long timeNextNs,
      long timeCreatedNs,
      int priority,
      String tenant,
      String actor,
      String workClass,
      Map<String, Object> userColumns) {
    this(
        id,
        epoch,
        timeNextNs,
        timeCreatedNs,
        priority,
        tenant,
        actor,
        workClass,
        userColumns,
        KeyPlace.FIRST);
  }

  /** Whether the row waits behind its key (held or to be held): see {@link KeyPlace}. */
  public boolean waitsForKey() {
    return keyPlace != KeyPlace.FIRST;
  }

  /** Whether {@code time_next} marks the row as held behind its key. */
  public boolean held() {
    return timeNextNs >= dev.sluice.db.QueueConvention.HELD_NS;
  }

  /** When the row is due: {@code time_next}, less the hold's offset when it is held. */
  public long dueNs() {
    return held() ? timeNextNs - dev.sluice.db.QueueConvention.HELD_NS : timeNextNs;
  }

  /** The same row with the place its key gave it (this row itself when the place is the same). */
  public EventRow withPlace(KeyPlace place) {
    return place == keyPlace
        ? this
        : new EventRow(
            id,
            epoch,
            timeNextNs,
            timeCreatedNs,
            priority,
            tenant,
            actor,
            workClass,
            userColumns,
            place);
  }
}
