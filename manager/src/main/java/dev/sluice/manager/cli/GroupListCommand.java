package dev.sluice.manager.cli;

import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.store.GroupStore;
import dev.sluice.db.store.Stores;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sluice group list}: the open event groups (sealed, not completed), oldest first. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description =
        "List the open event groups of every shard, oldest first: sealed (their completion event"
            + " was read) and waiting for their children. Each with its completion event (queue,"
            + " id) and how long it has waited. sluice group show KEY counts a group's children.")
final class GroupListCommand extends BaseCommand {
  @Option(names = "--shard", paramLabel = "SHARD", description = "Only this shard.")
  String shard;

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "100",
      description = "At most this many groups per shard (default ${DEFAULT-VALUE}, at most 1000).")
  int limit;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    if (limit < 1 || limit > 1000) {
      throw CliException.badInput("--limit must be 1..1000, was " + limit);
    }
    List<Object> all = new ArrayList<>();
    List<Object> errors = new ArrayList<>();
    List<String> more = new ArrayList<>();
    TextTable table =
        new TextTable("SHARD", "GROUP", "COMPLETION_QUEUE", "COMPLETION_ID", "ON_DEAD", "AGE");
    int failed = 0;
    try (ShardPools pools = new ShardPools(config.load())) {
      for (ShardPools.Shard s : pools.select(shard)) {
        List<GroupStore.Group> open;
        long count;
        long nowNs;
        try {
          SluiceMigrations.migrateSluice(s.dataSource());
          GroupStore store = Stores.over(s.dataSource()).groups();
          open = store.open(limit);
          count = open.size() < limit ? open.size() : store.openCount();
          nowNs = GroupCommand.nowNs(s.dataSource());
        } catch (RuntimeException e) {
          failed++;
          errors.add(Map.of("shard", s.name(), "error", String.valueOf(e.getMessage())));
          table.row(s.name(), "-", "-", "-", "UNREACHABLE", String.valueOf(e.getMessage()));
          continue;
        }
        if (count > open.size()) {
          more.add(
              "shard "
                  + s.name()
                  + ": the oldest "
                  + open.size()
                  + " of "
                  + count
                  + " open groups (raise --limit for more)");
        }
        for (GroupStore.Group g : open) {
          long ageMs = Math.max(0, (nowNs - g.sealedNs()) / 1_000_000);
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("shard", s.name());
          m.put("group", g.key());
          m.put("completion_queue", g.completionQueue());
          m.put("completion_id", g.completionId());
          m.put("on_dead", g.onDead());
          m.put("sealed", ScheduleCreateCommand.at(g.sealedNs()));
          m.put("age_ms", ageMs);
          all.add(m);
          table.row(
              s.name(),
              g.key(),
              g.completionQueue(),
              g.completionId(),
              g.onDead(),
              GroupCommand.age(g.sealedNs(), nowNs));
        }
      }
    }
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("open", all);
      m.put("errors", errors);
      printJson(m);
    } else if (table.isEmpty()) {
      note("no open event groups");
    } else {
      table.print(out());
    }
    more.forEach(this::note);
    return failed == 0 ? CliException.OK : CliException.FAILED;
  }
}
