package dev.sluice.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What an idle manager asks the database, by statement shape: the server's general log, kept in a
 * file of this process's temporary directory for the idle window only (so the server must run on
 * this machine, as the embedded one does), then counted (literals made {@code ?}). An account of
 * the idle query rate, not a figure of its own. The command's thread only.
 */
final class IdleStatements {
  /** A statement's line in the server's general log: its connection id, Query or Execute. */
  private static final Pattern ENTRY = Pattern.compile("\\s\\d+\\s+(Query|Execute)\\t(.*)$");

  private final BenchServer server;

  /** The server's general log file (its own setting, under its data directory when relative). */
  private Path file;

  private boolean on;

  IdleStatements(BenchServer server) {
    this.server = server;
  }

  /** Starts logging every statement to the table (a note, and nothing else, if not allowed). */
  void start() {
    try (Connection c = server.connectServer();
        Statement s = c.createStatement()) {
      s.execute("SET GLOBAL general_log = 0");
      try (ResultSet rs = s.executeQuery("SELECT @@datadir, @@general_log_file")) {
        rs.next();
        file = Path.of(rs.getString(1)).resolve(rs.getString(2));
      }
      Files.deleteIfExists(file);
      s.execute("SET GLOBAL log_output = 'FILE'");
      s.execute("SET GLOBAL general_log = 1");
      on = true;
    } catch (SQLException | IOException e) {
      Progress.note("idle statements: the general log cannot be used here: " + e.getMessage());
    }
  }

  /** Stops the log and notes the most frequent shapes, per second of {@code seconds}. */
  void report(String peer, double seconds) {
    if (!on) {
      return;
    }
    on = false;
    Map<String, Integer> shapes = new HashMap<>();
    try (Connection c = server.connectServer();
        Statement s = c.createStatement()) {
      s.execute("SET GLOBAL general_log = 0");
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        Matcher m = ENTRY.matcher(line);
        if (m.find()) {
          shapes.merge(shape(m.group(2)), 1, Integer::sum);
        }
      }
      Files.deleteIfExists(file);
    } catch (SQLException | IOException e) {
      Progress.note("idle statements: could not read the general log: " + e.getMessage());
      return;
    }
    List<Map.Entry<String, Integer>> top = new ArrayList<>(shapes.entrySet());
    top.sort((a, b) -> b.getValue() - a.getValue());
    StringBuilder sb = new StringBuilder(peer + ": idle statements per second, by shape:");
    for (Map.Entry<String, Integer> e : top.subList(0, Math.min(20, top.size()))) {
      sb.append(String.format(Locale.ROOT, "%n#   %6.2f  %s", e.getValue() / seconds, e.getKey()));
    }
    Progress.note(sb.toString());
  }

  /** The statement with its literals as {@code ?}, whitespace collapsed, cut at 110 characters. */
  static String shape(String sql) {
    String s =
        sql.replaceAll("'(?:[^'\\\\]|\\\\.)*'", "?")
            .replaceAll("\\b\\d+\\b", "?")
            .replaceAll("\\s+", " ")
            .trim();
    return s.length() > 110 ? s.substring(0, 110) + "…" : s;
  }
}
