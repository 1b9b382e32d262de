package dev.sluice.db.store;

import java.math.BigInteger;

/**
 * An ordered queue's key value as it is compared and bound, wherever it was read (a polled row's
 * column, a key statement's result): integers as a {@link Long} (or as their exact text past 2^63 -
 * 1), text as it is. The convention allows no other key type. Null stays null.
 */
public final class OrderingKeys {
  private OrderingKeys() {}

  /** {@code v} as a key. */
  public static Object normal(Object v) {
    if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    if (v instanceof BigInteger b) {
      return b.bitLength() < 64 ? (Object) b.longValue() : b.toString();
    }
    return v;
  }
}
