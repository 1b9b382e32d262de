package dev.sluice.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the server's statement counters ({@code SHOW GLOBAL STATUS}) on one connection of its own,
 * so that a run can count the statements a peer issued per event. Each read is itself one question;
 * {@link Delta#questions()} leaves it out.
 */
public final class ServerStatus implements AutoCloseable {
  static final List<String> COUNTERS =
      List.of(
          "Questions",
          "Com_select",
          "Com_insert",
          "Com_update",
          "Com_delete",
          "Com_commit",
          "Com_rollback",
          "Com_begin",
          "Com_set_option",
          "Innodb_rows_read",
          "Rows_read",
          "Handler_read_key",
          "Handler_read_next",
          "Handler_read_prev",
          "Handler_read_first",
          "Handler_read_rnd_next");

  private final Connection c;

  public ServerStatus(BenchServer server) throws SQLException {
    this.c = server.connectServer();
  }

  /** One reading of the counters. */
  public Map<String, Long> read() throws SQLException {
    Map<String, Long> out = new LinkedHashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('"
                    + String.join("','", COUNTERS)
                    + "')")) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getLong(2));
      }
    }
    return out;
  }

  /** The change between two readings, less the one question the second reading cost. */
  public record Delta(Map<String, Long> counts) {
    public static Delta between(Map<String, Long> before, Map<String, Long> after) {
      Map<String, Long> d = new LinkedHashMap<>();
      for (String k : COUNTERS) {
        d.put(k, after.getOrDefault(k, 0L) - before.getOrDefault(k, 0L));
      }
      d.put("Questions", d.get("Questions") - 1);
      return new Delta(d);
    }

    public long questions() {
      return counts.get("Questions");
    }

    public long get(String counter) {
      return counts.getOrDefault(counter, 0L);
    }

    /** E.g. {@code questions=0.012 select=0.001 update=0.008 commit=0.004} per event. */
    public String perEvent(long events) {
      double n = Math.max(1, events);
      return String.format(
          "questions=%.4f select=%.4f insert=%.4f update=%.4f delete=%.4f commit=%.4f"
              + " rollback=%.4f set_option=%.4f",
          get("Questions") / n,
          get("Com_select") / n,
          get("Com_insert") / n,
          get("Com_update") / n,
          get("Com_delete") / n,
          get("Com_commit") / n,
          get("Com_rollback") / n,
          get("Com_set_option") / n);
    }

    /**
     * Rows read: {@code Innodb_rows_read} on MySQL, {@code Rows_read} on MariaDB (which has no
     * InnoDB row counters since 10.6); each server has only one of the two.
     */
    public long rowsRead() {
      return get("Innodb_rows_read") + get("Rows_read");
    }

    /**
     * Rows the server read per event ({@link #rowsRead()}), and the handler calls behind them
     * (index seeks, steps along an index, full scans), e.g. {@code rows_read=3.02 read_key=2.10
     * read_next=0.95 read_prev=0 read_first=0 read_rnd_next=0.01}. Each reading of the counters
     * adds a few {@code read_rnd_next} of its own (the server fills a temporary table).
     */
    public String readsPerEvent(long events) {
      double n = Math.max(1, events);
      return String.format(
          java.util.Locale.ROOT,
          "rows_read=%.2f read_key=%.2f read_next=%.2f read_prev=%.2f read_first=%.2f"
              + " read_rnd_next=%.2f",
          rowsRead() / n,
          get("Handler_read_key") / n,
          get("Handler_read_next") / n,
          get("Handler_read_prev") / n,
          get("Handler_read_first") / n,
          get("Handler_read_rnd_next") / n);
    }

    /** {@link #rowsRead()} per event. */
    public double rowsReadPerEvent(long events) {
      return rowsRead() / (double) Math.max(1, events);
    }
  }

  @Override
  public void close() throws SQLException {
    c.close();
  }
}
