package dev.sluice.core.window;

import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.JsonText;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * An event's size as any outlet would send it, at most: its identity and times, and per user column
 * the name and the value in its longest encoding (text as UTF-8, bytes as they are, numbers and
 * times as 16 bytes, decimals and JSON as their text), each with room for its framing. It bounds
 * the gRPC wire form (ten-byte varints, length prefixes), so that an event within max_event_bytes
 * always fits a receiver's message, and it is what the window's byte budget counts.
 */
public final class EventSize {
  /** Id, epoch, priority, three times (varints of ten bytes) and their tags, with slack. */
  private static final int FIXED_BYTES = 80;

  /** A map entry's tag and length prefixes, and the value's tag and length prefix. */
  private static final int PER_COLUMN_BYTES = 16;

  private EventSize() {}

  public static int of(String queue, String shard, EventRow row) {
    return of(queue, shard, row, null);
  }

  /**
   * The same, for an ordered queue's event whose key is {@code orderingKey} (null: none): the key
   * is sent once more, in the event's own field, on top of its column.
   */
  public static int of(String queue, String shard, EventRow row, Object orderingKey) {
    if (orderingKey != null) {
      long n = of(queue, shard, row) + PER_COLUMN_BYTES + utf8(orderingKey.toString());
      return (int) Math.min(Integer.MAX_VALUE, n);
    }
    long n = FIXED_BYTES + utf8(queue) + utf8(shard) + utf8(row.tenant());
    for (Map.Entry<String, Object> c : row.userColumns().entrySet()) {
      n += PER_COLUMN_BYTES + utf8(c.getKey()) + valueBytes(c.getValue());
    }
    return (int) Math.min(Integer.MAX_VALUE, n);
  }

  private static long valueBytes(Object v) {
    if (v == null || v instanceof Boolean) {
      return 1;
    }
    if (v instanceof byte[] b) {
      return b.length;
    }
    if (v instanceof String s) {
      return utf8(s);
    }
    if (v instanceof JsonText j) {
      return utf8(j.json());
    }
    if (v instanceof Number
        && !(v instanceof java.math.BigDecimal)
        && !(v instanceof java.math.BigInteger)) {
      return 16;
    }
    if (v instanceof java.time.temporal.Temporal || v instanceof java.time.Duration) {
      return 32;
    }
    return utf8(v.toString());
  }

  private static long utf8(String s) {
    if (s == null) {
      return 0;
    }
    // Exact for ASCII; at most 3 bytes per char otherwise (surrogate pairs: 4 bytes for 2 chars).
    int n = s.length();
    for (int i = 0; i < n; i++) {
      if (s.charAt(i) >= 0x80) {
        return s.getBytes(StandardCharsets.UTF_8).length;
      }
    }
    return n;
  }
}
