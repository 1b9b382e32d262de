package dev.sluice.core.window;

import dev.sluice.db.store.OrderingKeys;

/**
 * An ordered queue's key as the dispatcher compares it and the key statements bind it: the ordering
 * column's value (an integer or a string: the convention allows no other type) with value equality
 * — a number as a {@link Long} (or as the exact text the store gives an unsigned value above 2^63 -
 * 1), a string as itself — or {@link #QUEUE} for a queue ordered as one key. Null stays null: a row
 * whose key is NULL is not ordered.
 */
public final class OrderingKey {
  /** The one key of a queue ordered as a whole ({@code ordering=queue}). */
  public static final String QUEUE = "";

  private OrderingKey() {}

  /** The key of a column value ({@link OrderingKeys#normal}, as the key statements bind it). */
  public static Object of(Object columnValue) {
    return OrderingKeys.normal(columnValue);
  }

  /** The key as a receiver is told it (null when there is none). */
  public static String text(Object key) {
    return key == null ? null : key.toString();
  }
}
