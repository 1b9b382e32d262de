package dev.sluice.manager.cli;

import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.schedule.Schedule;
import dev.sluice.db.store.Stores;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sluice schedule list}: every schedule of every shard, with its next occurrence. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description =
        "List the recurring events of every shard: queue, cron or interval, catch-up policy,"
            + " paused, next and last occurrence.")
final class ScheduleListCommand extends BaseCommand {
  @Option(names = "--shard", paramLabel = "SHARD", description = "Only this shard.")
  String shard;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    List<Object> all = new ArrayList<>();
    TextTable table =
        new TextTable(
            "SHARD", "SCHEDULE", "QUEUE", "WHEN", "CATCH_UP", "PAUSED", "NEXT", "LAST ID");
    int failed = 0;
    try (ShardPools pools = new ShardPools(config.load())) {
      for (ShardPools.Shard s : pools.select(shard)) {
        List<Schedule> found;
        try {
          SluiceMigrations.migrateSluice(s.dataSource());
          found = Stores.over(s.dataSource()).schedules().list();
        } catch (RuntimeException e) {
          failed++;
          all.add(Map.of("shard", s.name(), "error", String.valueOf(e.getMessage())));
          table.row(
              s.name(), "-", "-", "UNREACHABLE", "-", "-", "-", String.valueOf(e.getMessage()));
          continue;
        }
        for (Schedule sc : found) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("shard", s.name());
          m.put("schedule", sc.name());
          m.put("queue", sc.queue());
          m.put("cron", sc.cron());
          m.put("every_ms", sc.everyMs());
          m.put("zone", sc.zone());
          m.put("columns", sc.columnsJson());
          m.put("catch_up", sc.catchUp().sql());
          m.put("paused", sc.paused());
          m.put("next", sc.nextNs() == 0 ? null : ScheduleCreateCommand.at(sc.nextNs()));
          m.put("last", sc.lastNs() == 0 ? null : ScheduleCreateCommand.at(sc.lastNs()));
          m.put("last_id", sc.lastId());
          all.add(m);
          table.row(
              s.name(),
              sc.name(),
              sc.queue(),
              sc.describe(),
              sc.catchUp().sql(),
              sc.paused() ? "paused" : "-",
              sc.paused()
                  ? "-"
                  : sc.nextNs() == 0 ? "(starting)" : ScheduleCreateCommand.at(sc.nextNs()),
              sc.lastId() == null ? "-" : sc.lastId());
        }
      }
    }
    if (json) {
      printJson(Map.of("schedules", all));
    } else if (table.isEmpty()) {
      note("no schedules (create one: sluice schedule create NAME --queue Q --every 1m)");
    } else {
      table.print(out());
    }
    return failed == 0 ? CliException.OK : CliException.FAILED;
  }
}
