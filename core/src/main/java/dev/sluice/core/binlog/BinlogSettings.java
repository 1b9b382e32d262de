package dev.sluice.core.binlog;

import dev.sluice.db.BinlogCatalog;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * The server settings the binlog follower needs, read over JDBC: {@code log_bin} on and {@code
 * binlog_format=ROW}. Any {@code binlog_row_image} works ({@code FULL}, the default, lets the
 * follower tell a new pending row from the manager's own fires and acks; with {@code MINIMAL} some
 * rows just wake their queue). The grants (REPLICATION SLAVE and REPLICATION CLIENT, or MariaDB's
 * BINLOG MONITOR) are only known by connecting: a refusal says which.
 *
 * @param schema the shard's database
 * @param unmet what is missing and how to set it, or null when nothing is
 */
public record BinlogSettings(
    String schema, boolean logBin, String format, String rowImage, String unmet) {

  public static BinlogSettings read(DataSource ds) throws SQLException {
    BinlogCatalog.Settings read = BinlogCatalog.settings(ds);
    boolean logBin = read.logBin();
    String format = String.valueOf(read.format()).toUpperCase(Locale.ROOT);
    String image = String.valueOf(read.rowImage()).toUpperCase(Locale.ROOT);
    String schema = read.schema();
    String unmet = null;
    if (!logBin) {
      unmet =
          "the server's binlog is off (log_bin=OFF): start it with --log-bin (MySQL 8 has it on"
              + " unless --skip-log-bin) and binlog_format=ROW to have new rows wake their queue";
    } else if (!"ROW".equals(format)) {
      unmet =
          "the server logs binlog_format="
              + format
              + ", not ROW: SET GLOBAL binlog_format=ROW (and in its configuration) to have new"
              + " rows wake their queue";
    } else if (schema == null) {
      unmet = "the shard's URL names no database";
    } else {
      unmet = filtered(BinlogCatalog.filters(ds), schema);
    }
    return new BinlogSettings(schema, logBin, format, image, unmet);
  }

  /**
   * Whether the server's binlog filters leave the shard's database out (then no row of its queues
   * would ever be told); null when they do not, or when they cannot be read (no grant: the
   * connection will say so).
   */
  private static String filtered(BinlogCatalog.Filters f, String schema) {
    if (f == null) {
      return null;
    }
    List<String> doDb = names(f.doDb());
    List<String> ignoreDb = names(f.ignoreDb());
    if ((!doDb.isEmpty() && !doDb.contains(schema)) || ignoreDb.contains(schema)) {
      return "the server's binlog leaves out database "
          + schema
          + " (binlog_do_db / binlog_ignore_db): its rows are never in the binlog";
    }
    return null;
  }

  private static List<String> names(String csv) {
    if (csv == null || csv.isBlank()) {
      return List.of();
    }
    return Arrays.stream(csv.split(",")).map(String::trim).toList();
  }
}
