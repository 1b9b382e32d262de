package dev.sluice.core.config;

import java.util.Locale;

/**
 * Whether the shard's leader follows the server's binlog to learn of new rows (the shard's {@code
 * binlog} setting).
 */
public enum BinlogMode {
  /**
   * Follow it when the server allows (binlog on, ROW format, the user may read it); poll alone,
   * visibly (a warning, {@code sluice_binlog_following 0}, the status page), when it does not.
   */
  AUTO,
  /** Never follow it: the queues poll alone, as before the follower existed. */
  OFF;

  /** {@code auto} or {@code off} (any case); a clear error otherwise. */
  public static BinlogMode parse(String shard, String value) {
    try {
      return valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "shards[" + shard + "].binlog must be auto or off, was '" + value + "'");
    }
  }

  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
