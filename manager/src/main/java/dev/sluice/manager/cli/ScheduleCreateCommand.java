package dev.sluice.manager.cli;

import dev.sluice.db.Durations;
import dev.sluice.db.QueueTable;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.schedule.CatchUp;
import dev.sluice.db.schedule.Recurrence;
import dev.sluice.db.schedule.Schedule;
import dev.sluice.db.schedule.ScheduleColumns;
import dev.sluice.db.store.ScheduleStore;
import dev.sluice.db.store.Stores;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice schedule create NAME --queue Q (--cron EXPR | --every DURATION) ...}: a row of
 * {@code sluice_schedule} on the shard that holds the queue. The shard's leader starts it within a
 * second or so.
 */
@Command(
    name = "create",
    mixinStandardHelpOptions = true,
    description =
        "Create a recurring event: each occurrence is inserted into the queue as an ordinary event"
            + " (time_next = the occurrence's time) by the shard's leader, exactly once.")
final class ScheduleCreateCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The schedule's name.")
  String name;

  @Option(
      names = "--queue",
      required = true,
      paramLabel = "QUEUE",
      description = "The queue each occurrence is inserted into.")
  String queue;

  @ArgGroup(exclusive = true, multiplicity = "1")
  When when;

  static final class When {
    @Option(
        names = "--cron",
        paramLabel = "EXPR",
        description =
            "A cron expression: 5 fields (minute hour day-of-month month day-of-week) or 6"
                + " (seconds first), read in --zone. Quote it.")
    String cron;

    @Option(
        names = "--every",
        paramLabel = "DURATION",
        description = "A fixed interval: 250ms, 30s, 5m, 2h, 1d (at least 100ms).")
    String every;
  }

  @Option(
      names = "--zone",
      paramLabel = "ZONE",
      description = "The time zone of the cron expression (IANA id). Default: UTC.")
  String zone;

  @Option(
      names = "--column",
      paramLabel = "COLUMN=VALUE",
      description =
          "A column of each occurrence (repeatable). The value is read as JSON when it is a"
              + " number, true, false, null, an object or an array, else as text.")
  List<String> columns = List.of();

  @Option(
      names = "--catch-up",
      paramLabel = "POLICY",
      description =
          "Occurrences missed while no manager led the shard (more than a minute late): one"
              + " (default: one event stands for them), all (each, at most 1000), none (skipped).")
  String catchUp;

  @Option(
      names = "--shard",
      paramLabel = "SHARD",
      description = "The shard, when the queue is on several (a schedule lives on one).")
  String shard;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    queueName(queue);
    Duration every = null;
    if (when.every != null) {
      try {
        every = Durations.parse(when.every);
      } catch (IllegalArgumentException e) {
        throw CliException.badInput("--every: " + e.getMessage());
      }
    }
    Map<String, Object> cols = new LinkedHashMap<>();
    for (String kv : columns) {
      int eq = kv.indexOf('=');
      if (eq <= 0) {
        throw CliException.badInput("--column must be COLUMN=VALUE, was '" + kv + "'");
      }
      cols.put(kv.substring(0, eq).strip(), ScheduleColumns.valueOfText(kv.substring(eq + 1)));
    }
    Schedule s;
    try {
      s = Schedule.create(name, queue, when.cron, every, zone, cols, CatchUp.parse(catchUp));
    } catch (IllegalArgumentException e) {
      throw CliException.badInput("schedule " + name + ": " + e.getMessage());
    }
    try (ShardPools pools = new ShardPools(config.load())) {
      ShardPools.Found f = pools.findOne(queue, shard);
      f.operator(); // a table that breaks the convention is refused (exit 1)
      QueueTable table = f.queue().queue();
      for (String c : cols.keySet()) {
        if (!table.columns().containsKey(c)) {
          throw CliException.badInput(
              "schedule "
                  + name
                  + ": queue "
                  + queue
                  + " on shard "
                  + f.shard().name()
                  + " has no column '"
                  + c
                  + "' (its columns: "
                  + String.join(", ", table.userColumns())
                  + ")");
        }
      }
      SluiceMigrations.migrateSluice(f.shard().dataSource());
      ScheduleStore store = Stores.over(f.shard().dataSource()).schedules();
      store.create(s);
      Recurrence r = s.recurrence();
      long first = r.first(store.nowNs());
      if (json) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schedule", name);
        m.put("shard", f.shard().name());
        m.put("queue", queue);
        m.put("cron", s.cron());
        m.put("every_ms", s.everyMs());
        m.put("zone", s.zone());
        m.put("catch_up", s.catchUp().sql());
        m.put("columns", s.columns());
        m.put("first_occurrence", at(first));
        printJson(m);
      } else {
        println(
            "created schedule "
                + name
                + " on shard "
                + f.shard().name()
                + ": "
                + s.describe()
                + " into queue "
                + queue
                + ", catch_up="
                + s.catchUp().sql());
        note("first occurrence about " + at(first) + " (the shard's leader starts it)");
      }
    }
    return CliException.OK;
  }

  static String at(long ns) {
    return ns == Long.MAX_VALUE ? "never" : Instant.ofEpochSecond(0, ns).toString();
  }
}
