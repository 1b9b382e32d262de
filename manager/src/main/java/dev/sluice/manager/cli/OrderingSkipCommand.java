package dev.sluice.manager.cli;

import dev.sluice.manager.admin.AdminActions;
import dev.sluice.proto.v1.DeadChangeResponse;
import dev.sluice.proto.v1.SkipDeadRequest;
import dev.sluice.proto.v1.Unchanged;
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
 * {@code sluice ordering skip NAME ID...}: skips dead events of an ordered queue — each becomes
 * {@code cancelled} by a compare-and-set on (id, state, epoch) — so that a key halted at one goes
 * on with its next event. An id that is not dead (replayed meanwhile, say) is reported and left
 * alone: exit 1.
 */
@Command(
    name = "skip",
    mixinStandardHelpOptions = true,
    description =
        "Skip a halted key's dead event: it becomes cancelled and the key's next event goes."
            + " The ids are the DEAD_IDs of sluice ordering halted. Exit 1 if some id was not"
            + " dead.")
final class OrderingSkipCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The queue (table) name.")
  String name;

  @Parameters(
      index = "1..*",
      arity = "1..*",
      paramLabel = "ID",
      split = ",",
      description = "A dead event's id (at most 1000).")
  List<Long> ids;

  @Option(
      names = "--shard",
      paramLabel = "SHARD",
      description = "The shard (required when the queue is on several).")
  String shard;

  @Mixin ConfigOption config;

  @Mixin ManagerOption manager;

  @Override
  public Integer call() {
    queueName(name);
    List<Long> unique = List.copyOf(new LinkedHashSet<>(ids));
    if (unique.size() > DeadChangeCommand.BATCH) {
      throw CliException.badInput(
          "give at most " + DeadChangeCommand.BATCH + " ids, got " + unique.size());
    }
    long changed = 0;
    String where;
    List<Map<String, Object>> problems = new ArrayList<>();
    if (manager.given()) {
      SkipDeadRequest req =
          SkipDeadRequest.newBuilder()
              .setQueue(name)
              .setShard(shard == null ? "" : shard)
              .addAllIds(unique)
              .build();
      DeadChangeResponse r = manager.call(s -> s.skipDead(req));
      changed = r.getChanged();
      for (Unchanged u : r.getUnchangedList()) {
        problems.add(problem(u.getId(), u.getWhy()));
      }
      where = "through " + manager.manager;
    } else {
      try (ShardPools pools = new ShardPools(config.load())) {
        ShardPools.Found f = pools.findOne(name, shard);
        if (!f.queue().queue().options().ordered()) {
          throw CliException.badInput(
              "queue "
                  + name
                  + " on shard "
                  + f.shard().name()
                  + " is not ordered: skip is for a key halted at a dead event; use sluice dead"
                  + " replay or purge");
        }
        // The operator path, audited as the Admin API's skip is.
        AdminActions.ChangeResult r =
            DeadChangeCommand.changes(pools).skip(DeadChangeCommand.OPERATOR, name, shard, unique);
        changed = r.changed();
        for (AdminActions.Unchanged u : r.unchanged()) {
          problems.add(problem(u.id(), u.why()));
        }
        where = "on shard " + f.shard().name();
      }
    }
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("queue", name);
      m.put("skipped", changed);
      m.put("unchanged", problems);
      printJson(m);
    } else {
      println("skipped " + changed + " dead events of " + name + " " + where);
      for (Map<String, Object> p : problems) {
        note("id " + p.get("id") + ": " + p.get("problem") + ", left unchanged");
      }
    }
    return problems.isEmpty() ? CliException.OK : CliException.FAILED;
  }

  private static Map<String, Object> problem(long id, String what) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", id);
    m.put("problem", what);
    return m;
  }
}
