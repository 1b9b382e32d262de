package dev.sluice.manager.cli;

import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.db.store.OutOfRangeRow;
import dev.sluice.manager.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code sluice dead list NAME}: the dead events of a queue, with their data, by id. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description =
        "List a queue's dead events (attempts used up, or rows Sluice could not serve) by id,"
            + " with tenant, attempts, why each died and their columns. Page with --after.")
final class DeadListCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The queue (table) name.")
  String name;

  @Option(names = "--shard", paramLabel = "SHARD", description = "Only this shard.")
  String shard;

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "100",
      description = "At most this many events per shard (default ${DEFAULT-VALUE}).")
  int limit;

  @Option(
      names = "--after",
      paramLabel = "ID",
      defaultValue = "-9223372036854775808",
      description = "Only ids above this one (to page; default: from the lowest id).")
  long after;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    queueName(name);
    if (limit < 1 || limit > 10_000) {
      throw CliException.badInput("--limit must be 1..10000, was " + limit);
    }
    List<Object> events = new ArrayList<>();
    TextTable table =
        new TextTable("SHARD", "ID", "ATTEMPTS", "TENANT", "CREATED_AGO", "COLUMNS", "REASON");
    try (ShardPools pools = new ShardPools(config.load())) {
      for (ShardPools.Found f : pools.find(name, shard)) {
        JdbcEventStore store = f.store();
        long now = store.serverTimeNs();
        List<EventRow> dead = store.listDead(after, limit);
        List<Long> ids = new ArrayList<>(dead.size());
        dead.forEach(r -> ids.add(r.id()));
        Map<Long, String> reasons = store.deadReasons(ids);
        for (EventRow r : dead) {
          String reason = reasons.getOrDefault(r.id(), "");
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("shard", f.shard().name());
          m.put("id", r.id());
          m.put("attempts", r.epoch());
          m.put("tenant", r.tenant());
          m.put("time_created_ns", r.timeCreatedNs());
          m.put("reason", reason);
          Map<String, Object> cols = new LinkedHashMap<>();
          r.userColumns().forEach((k, v) -> cols.put(k, v instanceof byte[] b ? hex(b) : v));
          m.put("columns", cols);
          events.add(m);
          String text = Json.write(cols);
          table.row(
              f.shard().name(),
              r.id(),
              r.epoch(),
              r.tenant().isEmpty() ? "''" : r.tenant(),
              QueueStatsCommand.age((now - r.timeCreatedNs()) / 1_000_000),
              text.length() > 80 ? text.substring(0, 77) + "..." : text,
              reason.isEmpty() ? "-" : shorten(reason, 100));
        }
        // Ids above 2^63 - 1 (BIGINT UNSIGNED) come after every other id: listed on the last
        // page, never paged past nor replayed by id (an operator fixes them in SQL).
        List<OutOfRangeRow> beyond =
            dead.size() < limit ? store.deadOutOfRange(limit - dead.size()) : List.of();
        for (OutOfRangeRow r : beyond) {
          String reason = r.reason() == null ? "" : r.reason();
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("shard", f.shard().name());
          m.put("id", r.id());
          m.put("attempts", r.epoch());
          m.put("reason", reason);
          events.add(m);
          table.row(
              f.shard().name(),
              r.id(),
              r.epoch(),
              "-",
              "-",
              "-",
              reason.isEmpty() ? "-" : shorten(reason, 100));
        }
      }
    }
    if (json) {
      printJson(Map.of("queue", name, "dead", events));
    } else if (table.isEmpty()) {
      note(
          "queue "
              + name
              + " has no dead events"
              + (after != Long.MIN_VALUE ? " after id " + after : ""));
    } else {
      table.print(out());
    }
    return CliException.OK;
  }

  private static String shorten(String s, int max) {
    return s.length() > max ? s.substring(0, max - 3) + "..." : s;
  }

  private static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder("0x");
    for (byte x : b) {
      sb.append(String.format("%02x", x));
    }
    return sb.toString();
  }
}
