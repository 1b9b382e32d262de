package dev.sluice.core.binlog;

import com.github.shyiko.mysql.binlog.BinaryLogClient;
import dev.sluice.core.config.BinlogMode;
import dev.sluice.core.config.ShardConfig;
import javax.sql.DataSource;

/**
 * Whether a shard's binlog can be followed, as {@code sluice check} reports it: the server's
 * settings, then a real replication connection (the only way to know the grants), closed at once.
 *
 * @param followable whether the manager would follow it
 * @param detail what was found
 * @param fix how to make it followable, or null
 */
public record BinlogCheck(boolean followable, String detail, String fix) {

  public static BinlogCheck of(ShardConfig shard, DataSource dataSource) {
    if (shard.binlog() == BinlogMode.OFF) {
      return new BinlogCheck(false, "binlog: off in the configuration (queues poll alone)", null);
    }
    BinlogSettings s;
    try {
      s = BinlogSettings.read(dataSource);
    } catch (Exception e) {
      return new BinlogCheck(false, "binlog settings could not be read: " + e.getMessage(), null);
    }
    if (s.unmet() != null) {
      return new BinlogCheck(
          false,
          s.unmet(),
          s.logBin()
              ? "SET GLOBAL binlog_format = 'ROW' (and binlog_format=ROW in the server's"
                  + " configuration)"
              : "start the server with log_bin and binlog_format=ROW");
    }
    BinlogEndpoint endpoint;
    try {
      endpoint = BinlogEndpoint.of(shard);
    } catch (RuntimeException e) {
      return new BinlogCheck(false, "binlog: " + e.getMessage(), null);
    }
    BinaryLogClient c = endpoint.client();
    try {
      c.connect(5_000);
      return new BinlogCheck(
          true,
          "binlog followed from "
              + endpoint
              + " (binlog_format=ROW, binlog_row_image="
              + s.rowImage()
              + "): new rows wake their queue",
          null);
    } catch (Exception e) {
      String m = e.getMessage() == null ? e.toString() : e.getMessage();
      return new BinlogCheck(
          false,
          "binlog cannot be read by " + endpoint.user() + " at " + endpoint + ": " + m,
          m.contains("privilege")
              ? "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '"
                  + endpoint.user()
                  + "'@'%' (MariaDB 10.5+: REPLICATION SLAVE, BINLOG MONITOR)"
              : null);
    } finally {
      try {
        c.disconnect();
      } catch (Exception ignored) {
        // closing a probe
      }
    }
  }
}
