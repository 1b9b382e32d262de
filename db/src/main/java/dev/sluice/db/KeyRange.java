package dev.sluice.db;

import java.util.Locale;

/**
 * A range of keyspace ids, written as Vitess writes shard names: {@code -80} (from the start up to
 * 0x80…), {@code 80-} (from 0x80… to the end), {@code 40-c0}, or {@code -} / empty for everything.
 * Bounds are hex prefixes of the unsigned 64-bit keyspace id; start is inclusive, end exclusive.
 */
public record KeyRange(long start, long end, boolean openStart, boolean openEnd) {
  public static final KeyRange ALL = new KeyRange(0, 0, true, true);

  /** Parses a range; throws an IllegalArgumentException that says what is accepted. */
  public static KeyRange parse(String text) {
    String t = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
    if (t.isEmpty() || t.equals("-")) {
      return ALL;
    }
    int dash = t.indexOf('-');
    if (dash < 0 || t.indexOf('-', dash + 1) >= 0) {
      throw bad(text);
    }
    String a = t.substring(0, dash);
    String b = t.substring(dash + 1);
    KeyRange r =
        new KeyRange(
            a.isEmpty() ? 0 : bound(a, text),
            b.isEmpty() ? 0 : bound(b, text),
            a.isEmpty(),
            b.isEmpty());
    if (!r.openStart && !r.openEnd && Long.compareUnsigned(r.start, r.end) >= 0) {
      throw new IllegalArgumentException("key range '" + text + "': start must be below end");
    }
    return r;
  }

  private static long bound(String hex, String text) {
    if (hex.length() % 2 != 0 || hex.length() > 16 || !hex.matches("[0-9a-f]+")) {
      throw bad(text);
    }
    return Long.parseUnsignedLong(hex, 16) << (64 - 4 * hex.length());
  }

  private static IllegalArgumentException bad(String text) {
    return new IllegalArgumentException(
        "key range '"
            + text
            + "' is not valid: write START-END with hex bounds of even length, either side may be"
            + " empty (e.g. -80, 80-, 40-c0)");
  }

  public boolean contains(long keyspaceId) {
    boolean afterStart = openStart || Long.compareUnsigned(keyspaceId, start) >= 0;
    boolean beforeEnd = openEnd || Long.compareUnsigned(keyspaceId, end) < 0;
    return afterStart && beforeEnd;
  }

  /** Whether two ranges share any keyspace id. */
  public boolean overlaps(KeyRange o) {
    boolean thisStartsBeforeOtherEnds =
        o.openEnd || openStart || Long.compareUnsigned(start, o.end) < 0;
    boolean otherStartsBeforeThisEnds =
        openEnd || o.openStart || Long.compareUnsigned(o.start, end) < 0;
    return thisStartsBeforeOtherEnds && otherStartsBeforeThisEnds;
  }

  @Override
  public String toString() {
    if (openStart && openEnd) {
      return "-";
    }
    return (openStart ? "" : hex(start)) + "-" + (openEnd ? "" : hex(end));
  }

  private static String hex(long v) {
    String h = String.format("%016x", v);
    while (h.length() > 2 && h.endsWith("00")) {
      h = h.substring(0, h.length() - 2);
    }
    return h;
  }
}
