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
import picocli.CommandLine.Parameters;

/**
 * {@code sluice group show KEY}: an event group on each shard that knows it: its state, completion
 * event, times, the counts stored at completion, and its children now by state.
 */
@Command(
    name = "show",
    mixinStandardHelpOptions = true,
    description = {
      "Show an event group: sealed (its completion event was read and waits for the children),"
          + " completed (the completion event was released, with the counts shown) or not sealed"
          + " (no completion event read yet, or the group completed and its row was purged);"
          + " the completion event (queue, id), when it was sealed and completed, and the"
          + " children now by state, over every table of the shard with a group_key column.",
      "Exit 2 when no shard knows the group (no row, no child)."
    })
final class GroupShowCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "KEY", description = "The group's key.")
  String key;

  @Option(names = "--shard", paramLabel = "SHARD", description = "Only this shard.")
  String shard;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    GroupCommand.groupKey(key);
    List<Object> found = new ArrayList<>();
    List<String> lines = new ArrayList<>();
    int failed = 0;
    try (ShardPools pools = new ShardPools(config.load())) {
      for (ShardPools.Shard s : pools.select(shard)) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("shard", s.name());
        try {
          SluiceMigrations.migrateSluice(s.dataSource());
          GroupStore store = Stores.over(s.dataSource()).groups();
          GroupStore.Group g = store.find(List.of(key)).get(key);
          GroupStore.ChildCounts now = store.childCounts(key);
          if (g == null && now.total() == 0) {
            continue;
          }
          long nowNs = GroupCommand.nowNs(s.dataSource());
          describe(s.name(), g, now, nowNs, m, lines);
        } catch (RuntimeException e) {
          failed++;
          m.put("error", String.valueOf(e.getMessage()));
          lines.add("shard " + s.name() + ": failed: " + e.getMessage());
        }
        found.add(m);
      }
    }
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("group", key);
      m.put("shards", found);
      printJson(m);
    } else {
      lines.forEach(this::println);
    }
    if (failed > 0) {
      return CliException.FAILED;
    }
    if (found.isEmpty()) {
      throw CliException.badInput(
          "no group '"
              + key
              + "' on "
              + (shard == null ? "any shard" : "shard " + shard)
              + ": no completion event of it was read and no table holds a child of it (sluice"
              + " group list shows the open groups)");
    }
    return CliException.OK;
  }

  private void describe(
      String shardName,
      GroupStore.Group g,
      GroupStore.ChildCounts now,
      long nowNs,
      Map<String, Object> m,
      List<String> lines) {
    String state = g == null ? "not_sealed" : g.completed() ? "completed" : "sealed";
    m.put("state", state);
    if (g == null) {
      lines.add(
          "group "
              + key
              + " on shard "
              + shardName
              + ": not sealed (no completion event of it read yet, or it completed and its row"
              + " was purged)");
    } else {
      m.put("completion_queue", g.completionQueue());
      m.put("completion_id", g.completionId());
      m.put("on_dead", g.onDead());
      m.put("sealed", ScheduleCreateCommand.at(g.sealedNs()));
      m.put("sealed_ns", g.sealedNs());
      m.put(
          "completed", g.completedNs() == null ? null : ScheduleCreateCommand.at(g.completedNs()));
      m.put("completed_ns", g.completedNs());
      lines.add(
          "group "
              + key
              + " on shard "
              + shardName
              + ": "
              + (g.completed()
                  ? "completed (its completion event was released)"
                  : "sealed, waiting for its children"));
      lines.add(
          "  completion event: queue "
              + g.completionQueue()
              + ", id "
              + g.completionId()
              + " (group_on_dead="
              + g.onDead()
              + ")");
      lines.add(
          "  sealed:    "
              + ScheduleCreateCommand.at(g.sealedNs())
              + " ("
              + GroupCommand.age(g.sealedNs(), nowNs)
              + " ago)");
      if (g.completedNs() != null) {
        lines.add(
            "  completed: "
                + ScheduleCreateCommand.at(g.completedNs())
                + " ("
                + GroupCommand.age(g.completedNs(), nowNs)
                + " ago)");
        Map<String, Object> at = new LinkedHashMap<>();
        at.put("acked", g.acked());
        at.put("dead", g.dead());
        at.put("cancelled", g.cancelled());
        m.put("at_completion", at);
        lines.add(
            "  children at completion: "
                + g.acked()
                + " acked, "
                + g.dead()
                + " dead, "
                + g.cancelled()
                + " cancelled");
      }
    }
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("pending", now.pending());
    c.put("fired", now.fired());
    c.put("acked", now.acked());
    c.put("dead", now.dead());
    c.put("cancelled", now.cancelled());
    c.put("total", now.total());
    m.put("children", c);
    lines.add(
        "  children now: "
            + now.pending()
            + " pending, "
            + now.fired()
            + " fired, "
            + now.acked()
            + " acked, "
            + now.dead()
            + " dead, "
            + now.cancelled()
            + " cancelled ("
            + now.total()
            + " in all)");
  }
}
