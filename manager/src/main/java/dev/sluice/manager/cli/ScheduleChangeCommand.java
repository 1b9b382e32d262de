package dev.sluice.manager.cli;

import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.schedule.Schedule;
import dev.sluice.db.store.ScheduleStore;
import dev.sluice.db.store.Stores;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice schedule pause|resume|delete NAME}: changes the schedule's row on every shard that
 * has it (or the one given). The shard's leader reads it at its next pass (half a second).
 */
abstract class ScheduleChangeCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The schedule's name.")
  String name;

  @Option(names = "--shard", paramLabel = "SHARD", description = "Only this shard.")
  String shard;

  @Mixin ConfigOption config;

  /** The verb, as printed. */
  abstract String done();

  /** Applies it; false when the shard has no such schedule. */
  abstract boolean apply(ScheduleStore store);

  @Override
  public Integer call() {
    try {
      Schedule.requireName(name);
    } catch (IllegalArgumentException e) {
      throw CliException.badInput(e.getMessage());
    }
    List<String> shards = new ArrayList<>();
    try (ShardPools pools = new ShardPools(config.load())) {
      for (ShardPools.Shard s : pools.select(shard)) {
        SluiceMigrations.migrateSluice(s.dataSource());
        if (apply(Stores.over(s.dataSource()).schedules())) {
          shards.add(s.name());
          if (!json) {
            println(done() + " schedule " + name + " on shard " + s.name());
          }
        }
      }
    }
    if (shards.isEmpty()) {
      throw CliException.badInput(
          "no schedule named '"
              + name
              + "' on "
              + (shard == null ? "any shard" : "shard " + shard)
              + " (sluice schedule list shows them)");
    }
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("schedule", name);
      m.put("action", done());
      m.put("shards", shards);
      printJson(m);
    }
    return CliException.OK;
  }

  @Command(
      name = "pause",
      mixinStandardHelpOptions = true,
      description = "Pause a schedule: no occurrence is inserted until it is resumed.")
  static final class Pause extends ScheduleChangeCommand {
    @Override
    String done() {
      return "paused";
    }

    @Override
    boolean apply(ScheduleStore store) {
      return store.pause(name);
    }
  }

  @Command(
      name = "resume",
      mixinStandardHelpOptions = true,
      description =
          "Resume a paused schedule from now: occurrences that fell while it was paused are not"
              + " inserted.")
  static final class Resume extends ScheduleChangeCommand {
    @Override
    String done() {
      return "resumed";
    }

    @Override
    boolean apply(ScheduleStore store) {
      return store.resume(name);
    }
  }

  @Command(
      name = "delete",
      mixinStandardHelpOptions = true,
      description =
          "Delete a schedule. Occurrences already inserted (at most 2 s ahead of their time) stay"
              + " in the queue.")
  static final class Delete extends ScheduleChangeCommand {
    @Override
    String done() {
      return "deleted";
    }

    @Override
    boolean apply(ScheduleStore store) {
      return store.delete(name);
    }
  }
}
