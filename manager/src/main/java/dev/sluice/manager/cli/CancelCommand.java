package dev.sluice.manager.cli;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.OperatorStore;
import dev.sluice.manager.admin.Audit;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice cancel NAME ID...}: pending → cancelled through the compare-and-set. A cancelled
 * event never fires; one already fired, acked or unknown is reported and left alone (exit 1).
 */
@Command(
    name = "cancel",
    mixinStandardHelpOptions = true,
    description =
        "Cancel pending events by id: they will never fire. Events not pending (fired, acked,"
            + " dead...) or unknown are reported and left unchanged, and the exit code is 1.")
final class CancelCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The queue (table) name.")
  String name;

  @Parameters(
      index = "1..*",
      arity = "1..*",
      paramLabel = "ID",
      description = "Ids of pending events.")
  List<Long> ids;

  @Option(
      names = "--shard",
      paramLabel = "SHARD",
      description = "The shard (required when the queue is on several).")
  String shard;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    queueName(name);
    if (ids.size() > 10_000) {
      throw CliException.badInput("give at most 10000 ids at once, got " + ids.size());
    }
    Map<Long, CasOutcome> out;
    String shardName;
    try (ShardPools pools = new ShardPools(config.load())) {
      ShardPools.Found f = pools.findOne(name, shard);
      String on = f.shard().name();
      shardName = on;
      OperatorStore store = f.operator();
      // Straight to the store (no manager's window to tell), audited as the Admin API's cancel is.
      out =
          new Audit(new SimpleMeterRegistry())
              .audited(
                  DeadChangeCommand.OPERATOR,
                  "cancel",
                  name,
                  on,
                  () -> {
                    Map<Long, CasOutcome> r =
                        store.cancel(new LinkedHashSet<>(ids), store.serverTimeNs());
                    long n = r.values().stream().filter(o -> o == CasOutcome.APPLIED).count();
                    return new Audit.Outcome<>(r, n, on);
                  });
    }
    long cancelled = 0;
    List<Object> results = new ArrayList<>();
    for (Map.Entry<Long, CasOutcome> e : out.entrySet()) {
      String what =
          switch (e.getValue()) {
            case APPLIED -> "cancelled";
            case STALE -> "not pending";
            case UNKNOWN -> "unknown id";
          };
      if (e.getValue() == CasOutcome.APPLIED) {
        cancelled++;
      } else if (!json) {
        note("id " + e.getKey() + ": " + what + ", left unchanged");
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("id", e.getKey());
      m.put("result", what);
      results.add(m);
    }
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("queue", name);
      m.put("shard", shardName);
      m.put("cancelled", cancelled);
      m.put("results", results);
      printJson(m);
    } else {
      println("cancelled " + cancelled + " of " + out.size() + " events of " + name);
    }
    return cancelled == out.size() ? CliException.OK : CliException.FAILED;
  }
}
