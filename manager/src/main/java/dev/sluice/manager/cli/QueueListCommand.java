package dev.sluice.manager.cli;

import dev.sluice.db.QueueCatalog;
import dev.sluice.db.QueueControl;
import dev.sluice.db.QueueOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code sluice queue list}: every queue table on every shard, whether it is served and why not.
 */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description =
        "List the queue tables of every shard: valid (served) or not (with the problem), paused,"
            + " and the options their comment sets.")
final class QueueListCommand extends BaseCommand {
  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    List<Object> all = new ArrayList<>();
    TextTable table = new TextTable("SHARD", "QUEUE", "STATUS", "PAUSED", "OPTIONS / PROBLEM");
    try (ShardPools pools = new ShardPools(config.load())) {
      for (ShardPools.Shard s : pools.all()) {
        Map<String, Boolean> paused = paused(s);
        List<QueueCatalog.Discovered> found;
        try {
          found = s.catalog().discover();
        } catch (RuntimeException e) {
          // An unreachable shard is that shard's line; the others are listed.
          all.add(Map.of("shard", s.name(), "error", String.valueOf(e.getMessage())));
          table.row(s.name(), "-", "UNREACHABLE", "-", String.valueOf(e.getMessage()));
          continue;
        }
        for (QueueCatalog.Discovered d : found) {
          boolean p = paused.getOrDefault(d.table(), false);
          String opts = d.comment().strip().substring(QueueOptions.MARKER.length()).strip();
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("shard", s.name());
          m.put("queue", d.table());
          m.put("valid", d.valid());
          m.put("paused", p);
          m.put("comment", d.comment());
          m.put("options", d.valid() ? d.queue().options().asMap() : null);
          m.put("problem", d.problem());
          all.add(m);
          table.row(
              s.name(),
              d.table(),
              d.valid() ? "valid" : "INVALID",
              p ? "paused" : "-",
              d.valid() ? (opts.isEmpty() ? "(defaults)" : opts) : d.problem());
        }
      }
    }
    if (json) {
      printJson(Map.of("queues", all));
    } else if (table.isEmpty()) {
      note("no queue tables found (create one: sluice queue create NAME, then sluice migrate)");
    } else {
      table.print(out());
    }
    return CliException.OK;
  }

  /** The pause switches; none when Sluice's own tables are not there yet. */
  static Map<String, Boolean> paused(ShardPools.Shard s) {
    try {
      return new QueueControl(s.dataSource()).paused();
    } catch (RuntimeException e) {
      return Map.of();
    }
  }
}
