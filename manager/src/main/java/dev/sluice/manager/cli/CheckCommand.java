package dev.sluice.manager.cli;

import dev.sluice.client.QueueColumns;
import dev.sluice.core.binlog.BinlogCheck;
import dev.sluice.core.config.BinlogMode;
import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueConfigException;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.QueueSchemaValidator;
import dev.sluice.db.SchemaProblem;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.manager.security.Exposure;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code sluice check}: validates every shard's queue tables — the comment's options, the table
 * against the convention and an ordered queue's key column and index — and prints each problem with
 * the statement that fixes it. Exit 1 if any problem (or an unreachable shard). Recurring events
 * whose row the leader would skip (a bad cron expression, an unknown queue or column) are problems
 * too. Warnings (a table that is served, but with a zone-dependent time default) are printed with
 * their fix and do not change the exit code.
 */
@Command(
    name = "check",
    mixinStandardHelpOptions = true,
    description =
        "Validate every shard's queue tables (options comment, system columns, defaults, poll"
            + " index, engine, an ordered queue's key column and index) and the recurring events"
            + " (cron, queue, columns), and print each problem with the statement that fixes it."
            + " Exit 1 if there is any.")
final class CheckCommand extends BaseCommand {
  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    int problems = 0;
    int tables = 0;
    List<Object> out = new ArrayList<>();
    // Worth fixing, but the table is served: printed, not counted in the exit code.
    List<Object> warnings = new ArrayList<>();
    // Neither: how the table behaves that its owner may not expect (a snooze spending an attempt).
    List<Object> notes = new ArrayList<>();
    ManagerConfig loaded = config.load();
    problems += checkExposure(loaded, out);
    try (ShardPools pools = new ShardPools(loaded)) {
      for (ShardPools.Shard s : pools.all()) {
        List<QueueCatalog.Candidate> candidates;
        QueueCatalog catalog = s.catalog();
        try {
          candidates = catalog.candidates();
        } catch (RuntimeException e) {
          problems++;
          out.add(entry(s.name(), null, "shard unreachable: " + e.getMessage(), null));
          if (!json) {
            println(s.name() + ": cannot read the schema: " + e.getMessage());
          }
          continue;
        }
        for (QueueCatalog.Candidate c : candidates) {
          tables++;
          List<Map<String, Object>> found = new ArrayList<>();
          List<Map<String, Object>> warned = new ArrayList<>();
          List<Map<String, Object>> noted = new ArrayList<>();
          QueueOptions options = null;
          try {
            options = QueueOptions.parseComment(c.table(), c.comment());
          } catch (QueueConfigException e) {
            found.add(entry(s.name(), c.table(), e.getMessage(), commentFix(c)));
          }
          try {
            for (SchemaProblem p : catalog.problems(c.table())) {
              found.add(entry(s.name(), c.table(), p.column() + ": " + p.problem(), p.fix() + ";"));
            }
            if (options != null && options.ordered()) {
              // An ordered queue's key column and index (the manager refuses the queue without).
              for (SchemaProblem p :
                  QueueSchemaValidator.validateOrdering(
                      c.table(), options, catalog.columns(c.table()), catalog.indexes(c.table()))) {
                found.add(
                    entry(
                        s.name(),
                        c.table(),
                        "ordering=" + options.ordering() + ": " + p.column() + ": " + p.problem(),
                        p.fix() + ";"));
              }
            }
            // Event groups' columns and index (the manager refuses the queue without).
            for (SchemaProblem p :
                QueueSchemaValidator.validateGroups(
                    c.table(), options, catalog.columns(c.table()), catalog.indexes(c.table()))) {
              found.add(
                  entry(
                      s.name(),
                      c.table(),
                      "event groups: " + p.column() + ": " + p.problem(),
                      p.fix() + ";"));
            }
            for (SchemaProblem p : catalog.warnings(c.table())) {
              warned.add(
                  entry(s.name(), c.table(), p.column() + ": " + p.problem(), p.fix() + ";"));
            }
            if (!catalog.columns(c.table()).containsKey(QueueColumns.SNOOZES)) {
              noted.add(snoozeNote(s.name(), c.table()));
            }
          } catch (RuntimeException e) {
            // One table that cannot be read is that table's problem; the others are checked.
            found.add(entry(s.name(), c.table(), "cannot be read: " + e, "-"));
          }
          problems += found.size();
          out.addAll(found);
          warnings.addAll(warned);
          notes.addAll(noted);
          if (!json) {
            if (found.isEmpty()) {
              println(s.name() + "  " + c.table() + "  ok");
            }
            for (Map<String, Object> f : found) {
              println(s.name() + "  " + c.table() + "  " + f.get("problem"));
              println("    fix: " + f.get("fix"));
            }
            for (Map<String, Object> f : warned) {
              println(s.name() + "  " + c.table() + "  warning: " + f.get("problem"));
              println("    fix: " + f.get("fix"));
            }
            for (Map<String, Object> f : noted) {
              println(s.name() + "  " + c.table() + "  note: " + f.get("problem"));
              println("    to count snoozes: " + f.get("fix"));
            }
          }
        }
        // Not a problem (the queues poll alone without it), but worth knowing: a warning.
        BinlogCheck binlog = BinlogCheck.of(s.config(), s.dataSource());
        if (!binlog.followable() && s.config().binlog() == BinlogMode.AUTO) {
          warnings.add(entry(s.name(), null, binlog.detail(), binlog.fix()));
        }
        if (!json) {
          println(
              s.name()
                  + "  "
                  + (binlog.followable() || binlog.fix() == null
                      ? binlog.detail()
                      : "warning: " + binlog.detail() + "\n    fix: " + binlog.fix()));
        }
        Map<String, QueueCatalog.Candidate> byName = new LinkedHashMap<>();
        candidates.forEach(c -> byName.put(c.table(), c));
        List<Map<String, Object>> scheduleProblems = ScheduleCheck.problems(s, byName);
        problems += scheduleProblems.size();
        out.addAll(scheduleProblems);
        if (!json) {
          for (Map<String, Object> f : scheduleProblems) {
            println(s.name() + "  " + f.get("queue") + "  " + f.get("problem"));
            println("    fix: " + f.get("fix"));
          }
        }
      }
    }
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("tables", tables);
      m.put("problems", out);
      m.put("warnings", warnings);
      m.put("notes", notes);
      printJson(m);
    } else if (tables == 0 && problems == 0) {
      note("no queue tables found");
    } else {
      note(problems == 0 ? tables + " queue table(s) ok" : problems + " problem(s) found");
    }
    return problems == 0 ? CliException.OK : CliException.FAILED;
  }

  /**
   * The safe-default rule, as {@code serve} would apply it: listening beyond loopback without TLS
   * and authentication is a problem (serve refuses it); with {@code allow_insecure: true} it is
   * reported as a warning and not counted.
   */
  private int checkExposure(ManagerConfig c, List<Object> out) {
    List<String> found = Exposure.problems(c.grpcHost(), c.httpHost(), c.security());
    for (String p : found) {
      boolean allowed = c.security().allowInsecure();
      String text = (allowed ? "INSECURE (allow_insecure: true): " : "insecure: ") + p;
      String fix =
          "configure tls and auth, or bind to 127.0.0.1 (grpc_bind, http_bind)"
              + (allowed ? "" : ", or set allow_insecure: true to accept the risk");
      out.add(entry("-", null, text, fix));
      if (!json) {
        println("config  " + text);
        println("    fix: " + fix);
      }
    }
    return c.security().allowInsecure() ? 0 : found.size();
  }

  /** A table without the {@code snoozes} column: a handler's snooze spends an attempt there. */
  private static Map<String, Object> snoozeNote(String shard, String table) {
    return entry(
        shard,
        table,
        "no "
            + QueueColumns.SNOOZES
            + " column: a handler's snooze counts as a failed attempt here",
        "ALTER TABLE `" + table + "` ADD COLUMN " + QueueColumns.SNOOZES_DEFINITION + ";");
  }

  private static Map<String, Object> entry(String shard, String table, String problem, String fix) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("shard", shard);
    m.put("queue", table);
    m.put("problem", problem);
    m.put("fix", fix);
    return m;
  }

  /** The comment without the options that do not parse on their own. */
  static String commentFix(QueueCatalog.Candidate c) {
    StringBuilder kept = new StringBuilder(QueueOptions.MARKER);
    String rest = c.comment().strip().substring(QueueOptions.MARKER.length()).strip();
    if (!rest.isEmpty()) {
      for (String token : rest.split("\\s+")) {
        try {
          QueueOptions.parseComment(c.table(), kept + " " + token);
          kept.append(' ').append(token);
        } catch (QueueConfigException e) {
          // dropped: the fix removes it
        }
      }
    }
    String comment = kept.toString();
    try {
      QueueOptions.parseComment(c.table(), comment);
    } catch (QueueConfigException e) {
      comment = QueueOptions.MARKER;
    }
    return "ALTER TABLE `" + c.table() + "` COMMENT = '" + comment.replace("'", "''") + "';";
  }
}
