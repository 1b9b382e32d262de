package dev.sluice.db;

import dev.sluice.client.QueueColumns;
import java.util.List;
import java.util.Map;

/**
 * A queue table that passed validation: its name, options and the columns the store reads.
 *
 * @param stateIsEnum whether {@code state} is an ENUM (names) rather than an integer (codes)
 * @param userColumns every column that is not a system column, in table order
 * @param hasActor whether the optional {@code actor} column exists
 * @param hasClass whether the optional {@code class} column exists
 * @param pollIndex the name of the (state, time_next) index the poll query is read from (the
 *     validation requires one; {@link QueueConvention#POLL_INDEX} when that one has this shape)
 * @param tenantIndex the name of the (state, tenant, time_next) index, or null when there is none
 * @param orderingIndex for an ordered queue, the index its key checks read: (key column, state) for
 *     {@code ordering=key}, (state) or (state, id) for {@code ordering=queue}; null otherwise
 */
public record QueueTable(
    String name,
    QueueOptions options,
    boolean stateIsEnum,
    List<String> userColumns,
    boolean hasActor,
    boolean hasClass,
    String pollIndex,
    String tenantIndex,
    Map<String, ColumnInfo> columns,
    String orderingIndex) {

  /** The same table without an ordering index (tests and unordered queues). */
  public QueueTable(
      String name,
      QueueOptions options,
      boolean stateIsEnum,
      List<String> userColumns,
      boolean hasActor,
      boolean hasClass,
      String pollIndex,
      String tenantIndex,
      Map<String, ColumnInfo> columns) {
    this(
        name,
        options,
        stateIsEnum,
        userColumns,
        hasActor,
        hasClass,
        pollIndex,
        tenantIndex,
        columns,
        null);
  }

  /**
   * The column whose value orders events ({@code ordering=key}), or null: not ordered, or the whole
   * queue is one key.
   */
  public String orderingColumn() {
    // Column names are matched without case, and the catalog keeps them in lower case.
    return options.ordered() && !options.orderedAsOneKey()
        ? options.orderingColumn().toLowerCase(java.util.Locale.ROOT)
        : null;
  }

  /** Whether the table has the deduplication column {@link QueueConvention#DEDUP_KEY}. */
  public boolean hasDedupKey() {
    return userColumns.contains(QueueConvention.DEDUP_KEY);
  }

  /** Whether the table holds children of event groups (it has {@code group_key}). */
  public boolean hasGroupKey() {
    return userColumns.contains(QueueColumns.GROUP_KEY);
  }

  /** Whether the optional {@code snoozes} column exists: a snooze then spends no attempt. */
  public boolean hasSnoozes() {
    return userColumns.contains(QueueColumns.SNOOZES);
  }

  /** Whether the table holds completion events of groups (it has {@code completes_group}). */
  public boolean completesGroups() {
    return userColumns.contains(QueueColumns.COMPLETES_GROUP);
  }

  /** Whether the (state, tenant, time_next) index exists. */
  public boolean hasTenantIndex() {
    return tenantIndex != null;
  }

  /** The value the state column holds for {@code s}. */
  public Object stateValue(EventState s) {
    return stateIsEnum ? s.sqlName() : s.code();
  }

  /**
   * Reads a state column value, whichever way the column stores it; null for a value that is no
   * state (an application or operator wrote it by hand): never an exception, so that one such row
   * cannot stop a loop. Integer columns are read as numbers (see {@code JdbcEventStore}), also when
   * declared {@code TINYINT(1)}/{@code BOOLEAN}, which the driver would otherwise map to a Boolean.
   */
  public EventState decodeState(Object v) {
    if (v instanceof Number n) {
      return EventState.ofCodeOrNull(n.longValue());
    }
    if (v == null || v instanceof Boolean) {
      return null;
    }
    return EventState.ofNameOrNull(String.valueOf(v));
  }
}
