package dev.sluice.manager.cli;

import dev.sluice.db.store.HaltedKey;
import dev.sluice.db.store.OperatorStore;
import dev.sluice.proto.v1.ListHaltedRequest;
import dev.sluice.proto.v1.ListHaltedResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice ordering halted NAME}: the keys of an ordered queue ({@code ordering_on_dead=halt})
 * stopped at a dead event, each with that event's id and how many events wait behind it.
 */
@Command(
    name = "halted",
    mixinStandardHelpOptions = true,
    description =
        "List an ordered queue's keys halted at a dead event (ordering_on_dead=halt): the key,"
            + " the dead event's id and how many events wait behind it. Let a key go on with"
            + " sluice dead replay NAME --id DEAD_ID (retry it) or sluice ordering skip NAME"
            + " DEAD_ID (cancel it).")
final class OrderingHaltedCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The queue (table) name.")
  String name;

  @Option(names = "--shard", paramLabel = "SHARD", description = "Only this shard.")
  String shard;

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "100",
      description = "At most this many keys per shard (default ${DEFAULT-VALUE}, at most 500).")
  int limit;

  @Mixin ConfigOption config;

  @Mixin ManagerOption manager;

  @Override
  public Integer call() {
    queueName(name);
    if (limit < 1 || limit > 500) {
      throw CliException.badInput("--limit must be 1..500, was " + limit);
    }
    List<Object> keys = new ArrayList<>();
    TextTable table = new TextTable("SHARD", "KEY", "DEAD_ID", "WAITING");
    List<String> notHalting = new ArrayList<>();
    if (manager.given()) {
      ListHaltedRequest req =
          ListHaltedRequest.newBuilder()
              .setQueue(name)
              .setShard(shard == null ? "" : shard)
              .setLimit(limit)
              .build();
      ListHaltedResponse r = manager.call(s -> s.listHalted(req));
      if (!r.getHalting()) {
        notHalting.add(r.getShard());
      }
      for (dev.sluice.proto.v1.HaltedKey k : r.getKeysList()) {
        add(keys, table, r.getShard(), new HaltedKey(k.getKey(), k.getDeadId(), k.getWaiting()));
      }
    } else {
      try (ShardPools pools = new ShardPools(config.load())) {
        for (ShardPools.Found f : pools.find(name, shard)) {
          OperatorStore store = f.operator();
          if (!f.queue().queue().options().haltOnDead()) {
            notHalting.add(f.shard().name());
            continue;
          }
          for (HaltedKey k : store.haltedKeys(limit)) {
            add(keys, table, f.shard().name(), k);
          }
        }
      }
    }
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("queue", name);
      m.put("halted", keys);
      m.put("not_halting_on", notHalting);
      printJson(m);
      return CliException.OK;
    }
    for (String s : notHalting) {
      note(
          "queue "
              + name
              + " on shard "
              + s
              + " does not halt keys at dead events (it needs ordering=key or queue and"
              + " ordering_on_dead=halt)");
    }
    if (table.isEmpty()) {
      note("queue " + name + " has no halted keys");
    } else {
      table.print(out());
    }
    return CliException.OK;
  }

  private static void add(List<Object> keys, TextTable table, String shard, HaltedKey k) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("shard", shard);
    m.put("key", k.key());
    m.put("dead_id", k.deadId());
    m.put("waiting", k.waiting());
    keys.add(m);
    table.row(shard, k.key().isEmpty() ? "''" : k.key(), k.deadId(), k.waiting());
  }
}
