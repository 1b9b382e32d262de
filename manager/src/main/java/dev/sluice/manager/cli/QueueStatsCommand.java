package dev.sluice.manager.cli;

import dev.sluice.db.QueueCatalog;
import dev.sluice.db.store.MaintenanceStore;
import dev.sluice.db.store.StateCounts;
import dev.sluice.db.store.TenantCounts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice queue stats [NAME] [--tenants]}: rows by state per shard and queue, straight from
 * the tables (no manager needed), with the age of the oldest due event by each shard's clock.
 */
@Command(
    name = "stats",
    mixinStandardHelpOptions = true,
    description = {
      "Show each queue's events by state on every shard (pending, fired, acked, dead, cancelled)"
          + " and how long the oldest due pending event has waited, from SQL. OTHER counts rows"
          + " whose state is none of these (set by hand): Sluice never serves them.",
      "With --tenants, the same per tenant (busiest first)."
    })
final class QueueStatsCommand extends BaseCommand {
  @Parameters(
      index = "0",
      arity = "0..1",
      paramLabel = "NAME",
      description = "Only this queue. Default: every valid queue.")
  String name;

  @Option(names = "--tenants", description = "Break the figures down per tenant.")
  boolean tenants;

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "50",
      description =
          "With --tenants: at most this many tenants per queue (default ${DEFAULT-VALUE}).")
  int limit;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    if (name != null) {
      queueName(name);
    }
    if (limit < 1) {
      throw CliException.badInput("--limit must be at least 1, was " + limit);
    }
    List<Object> rows = new ArrayList<>();
    TextTable queues = new TextTable(header("SHARD", "QUEUE"));
    TextTable byTenant = new TextTable(header("SHARD", "QUEUE", "TENANT"));
    int invalid = 0;
    try (ShardPools pools = new ShardPools(config.load())) {
      List<ShardPools.Found> found = new ArrayList<>();
      if (name != null) {
        found.addAll(pools.find(name, null));
      } else {
        for (ShardPools.Shard s : pools.all()) {
          for (QueueCatalog.Discovered d : s.catalog().discover()) {
            found.add(new ShardPools.Found(s, d));
          }
        }
      }
      for (ShardPools.Found f : found) {
        if (!f.queue().valid()) {
          invalid++;
          note("shard " + f.shard().name() + ": " + f.queue().problem());
          continue;
        }
        MaintenanceStore store = f.maintenance();
        long now = store.serverTimeNs();
        StateCounts c = store.counts();
        String shard = f.shard().name();
        String queue = f.queue().table();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("shard", shard);
        m.put("queue", queue);
        m.putAll(counts(c, now));
        queues.row(cells(c, now, shard, queue));
        if (tenants) {
          List<Object> ts = new ArrayList<>();
          for (TenantCounts t : store.countsByTenant(limit)) {
            StateCounts tc = t.counts();
            Map<String, Object> tm = new LinkedHashMap<>();
            tm.put("tenant", t.tenant());
            tm.putAll(counts(tc, now));
            ts.add(tm);
            byTenant.row(cells(tc, now, shard, queue, t.tenant().isEmpty() ? "''" : t.tenant()));
          }
          m.put("tenants", ts);
        }
        rows.add(m);
      }
    }
    if (json) {
      printJson(Map.of("queues", rows));
    } else if (queues.isEmpty() && invalid == 0) {
      note("no queue tables found (create one: sluice queue create NAME, then sluice migrate)");
    } else {
      queues.print(out());
      if (tenants && !byTenant.isEmpty()) {
        println("");
        byTenant.print(out());
      }
    }
    return name != null && invalid > 0 ? CliException.FAILED : CliException.OK;
  }

  /** {@code lead}, then the count columns both tables share (in {@link #cells}' order). */
  private static String[] header(String... lead) {
    return Stream.concat(
            Stream.of(lead),
            Stream.of("PENDING", "FIRED", "ACKED", "DEAD", "CANCELLED", "OLDEST_DUE", "OTHER"))
        .toArray(String[]::new);
  }

  /** {@code lead}, then {@code c}'s counts under {@link #header}'s count columns. */
  private static Object[] cells(StateCounts c, long nowNs, Object... lead) {
    return Stream.concat(
            Stream.of(lead),
            Stream.of(
                c.pending(),
                c.fired(),
                c.acked(),
                c.dead(),
                c.cancelled(),
                age(oldestDueMs(c, nowNs)),
                c.other()))
        .toArray();
  }

  private static Map<String, Object> counts(StateCounts c, long nowNs) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("pending", c.pending());
    m.put("fired", c.fired());
    m.put("acked", c.acked());
    m.put("dead", c.dead());
    m.put("cancelled", c.cancelled());
    m.put("other", c.other());
    m.put("oldest_due_age_ms", oldestDueMs(c, nowNs));
    return m;
  }

  /** How long the oldest due pending event has waited; 0 when none is due. */
  static long oldestDueMs(StateCounts c, long nowNs) {
    if (c.pending() == 0 || c.oldestDueNs() == 0 || c.oldestDueNs() > nowNs) {
      return 0;
    }
    return (nowNs - c.oldestDueNs()) / 1_000_000;
  }

  /** 0 → "-", else a short human duration such as 850ms, 12s, 3m20s, 5h2m, 2d4h. */
  static String age(long ms) {
    if (ms <= 0) {
      return "-";
    }
    Duration d = Duration.ofMillis(ms);
    if (ms < 1000) {
      return ms + "ms";
    }
    if (d.toMinutes() < 1) {
      return d.toSeconds() + "s";
    }
    if (d.toHours() < 1) {
      return d.toMinutes() + "m" + d.toSecondsPart() + "s";
    }
    if (d.toDays() < 1) {
      return d.toHours() + "h" + d.toMinutesPart() + "m";
    }
    return d.toDays() + "d" + d.toHoursPart() + "h";
  }
}
