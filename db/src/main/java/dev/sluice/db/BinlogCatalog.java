package dev.sluice.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * What the core's binlog follower reads of the server over JDBC: the binlog settings, the binlog
 * filters, and a table's columns in row order. Only reads; any thread.
 */
public final class BinlogCatalog {
  private BinlogCatalog() {}

  /** The server's binlog settings and the connection's database (null when the URL names none). */
  public record Settings(boolean logBin, String format, String rowImage, String schema) {}

  /**
   * {@code Binlog_Do_DB} and {@code Binlog_Ignore_DB} of {@code SHOW MASTER STATUS}, as the server
   * writes them (comma-separated, possibly empty or null).
   */
  public record Filters(String doDb, String ignoreDb) {}

  /** One column of a table: its name, {@code DATA_TYPE} and {@code COLUMN_TYPE}. */
  public record Column(String name, String dataType, String columnType) {}

  /** Reads the server's binlog settings. */
  public static Settings settings(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT @@log_bin, @@binlog_format, @@binlog_row_image, DATABASE()")) {
      rs.next();
      return new Settings(rs.getInt(1) == 1, rs.getString(2), rs.getString(3), rs.getString(4));
    }
  }

  /**
   * The server's binlog filters; null when the server reports none (binlog off) or they cannot be
   * read (no grant).
   */
  public static Filters filters(DataSource ds) {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SHOW MASTER STATUS")) {
      if (!rs.next()) {
        return null;
      }
      return new Filters(rs.getString("Binlog_Do_DB"), rs.getString("Binlog_Ignore_DB"));
    } catch (SQLException e) {
      return null;
    }
  }

  /** The columns of {@code schema.table} in row order, from information_schema. */
  public static List<Column> columns(DataSource ds, String schema, String table)
      throws SQLException {
    String sql =
        "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS"
            + " WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION";
    List<Column> out = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, schema);
      ps.setString(2, table);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new Column(rs.getString(1), rs.getString(2), rs.getString(3)));
        }
      }
    }
    return out;
  }
}
