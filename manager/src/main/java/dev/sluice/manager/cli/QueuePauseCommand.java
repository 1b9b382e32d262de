package dev.sluice.manager.cli;

import dev.sluice.db.QueueControl;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.proto.v1.PauseRequest;
import dev.sluice.proto.v1.PauseResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice queue pause|resume NAME}: sets the queue's switch in {@code sluice_queue_control}
 * on every shard that has the queue. Managers read it at each discovery round: a paused queue fires
 * nothing new, while acks, nacks and timeouts of events already out go on.
 */
abstract class QueuePauseCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The queue (table) name.")
  String name;

  @Mixin ConfigOption config;

  @Mixin ManagerOption manager;

  abstract boolean pause();

  @Override
  public Integer call() {
    queueName(name);
    List<Object> shards = new ArrayList<>();
    if (manager.given()) {
      // Through the manager: it checks the pause grant, audits, and applies it at once itself.
      PauseRequest req = PauseRequest.newBuilder().setQueue(name).build();
      PauseResponse r = manager.call(s -> pause() ? s.pause(req) : s.resume(req));
      for (String s : r.getShardsList()) {
        shards.add(s);
        if (!json) {
          println((pause() ? "paused " : "resumed ") + name + " on shard " + s);
        }
      }
    } else {
      overSql(shards);
    }
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("queue", name);
      m.put("paused", pause());
      m.put("shards", shards);
      printJson(m);
    } else if (manager.given()) {
      note(
          manager.manager
              + " applied it; other managers do at their next discovery round"
              + " (discovery_interval, 5s by default)");
    } else {
      note("managers apply it at their next discovery round (discovery_interval, 5s by default)");
    }
    return CliException.OK;
  }

  private void overSql(List<Object> shards) {
    try (ShardPools pools = new ShardPools(config.load())) {
      for (ShardPools.Found f : pools.find(name, null)) {
        // The control table is Sluice's own (migration V2): make sure it is there.
        SluiceMigrations.migrateSluice(f.shard().dataSource());
        new QueueControl(f.shard().dataSource()).setPaused(name, pause());
        shards.add(f.shard().name());
        if (!json) {
          println((pause() ? "paused " : "resumed ") + name + " on shard " + f.shard().name());
        }
      }
    }
  }

  @Command(
      name = "pause",
      mixinStandardHelpOptions = true,
      description =
          "Pause a queue on every shard: nothing new is dispatched; acks, nacks and timeouts of"
              + " events already sent go on. Takes effect within discovery_interval.")
  static final class Pause extends QueuePauseCommand {
    @Override
    boolean pause() {
      return true;
    }
  }

  @Command(
      name = "resume",
      mixinStandardHelpOptions = true,
      description = "Resume a paused queue on every shard. Takes effect within discovery_interval.")
  static final class Resume extends QueuePauseCommand {
    @Override
    boolean pause() {
      return false;
    }
  }
}
