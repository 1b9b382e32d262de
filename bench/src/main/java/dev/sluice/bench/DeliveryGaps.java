package dev.sluice.bench;

import java.util.HashMap;
import java.util.Map;

/**
 * The longest pause between two deliveries of each shard's events, whichever manager made them,
 * since the last {@link #reset}. Any thread (synchronized: a delivery batch takes it once).
 */
final class DeliveryGaps {
  private final Map<String, long[]> byShard = new HashMap<>();

  /** A delivery of {@code shard}'s events now (ns); returns nothing. */
  synchronized void delivered(String shard, long nowNs) {
    long[] s = byShard.computeIfAbsent(shard, k -> new long[] {nowNs, 0, 0});
    long gap = nowNs - s[0];
    if (gap > s[1]) {
      s[1] = gap;
    }
    s[0] = nowNs;
    s[2]++;
  }

  /** Starts a new measurement: the longest gap of every shard goes back to zero. */
  synchronized void reset() {
    for (long[] s : byShard.values()) {
      s[1] = 0;
      s[2] = 0;
    }
  }

  /** The longest gap of {@code shard} since the last reset, in ms. */
  synchronized double longestMs(String shard) {
    long[] s = byShard.get(shard);
    return s == null ? Double.NaN : s[1] / 1e6;
  }

  /** Deliveries of {@code shard} since the last reset. */
  synchronized long count(String shard) {
    long[] s = byShard.get(shard);
    return s == null ? 0 : s[2];
  }
}
