package dev.sluice.core.queue;

import java.util.HexFormat;

/**
 * An ordered queue's key as the dispatcher compares it: the ordering column's value made into
 * something with value equality — a number as a {@link Long} (or its exact {@link
 * java.math.BigInteger}), a string as itself, bytes as {@code 0x} and their hex — or {@link #QUEUE}
 * for a queue ordered as one key. Null stays null: a row whose key is NULL is not ordered.
 */
final class OrderingKey {
  /** The one key of a queue ordered as a whole ({@code ordering=queue}). */
  static final String QUEUE = "";

  private OrderingKey() {}

  /** The key of a column value. */
  static Object of(Object columnValue) {
    if (columnValue == null) {
      return null;
    }
    if (columnValue instanceof byte[] b) {
      return "0x" + HexFormat.of().formatHex(b);
    }
    if (columnValue instanceof Integer || columnValue instanceof Short) {
      return ((Number) columnValue).longValue();
    }
    return columnValue;
  }

  /** The key as a receiver is told it (null when there is none). */
  static String text(Object key) {
    return key == null ? null : key.toString();
  }
}
