package dev.sluice.manager.cli;

import dev.sluice.db.store.OperatorStore;
import dev.sluice.manager.admin.AdminActions;
import dev.sluice.manager.admin.AdminActions.ChangeResult;
import dev.sluice.manager.admin.AdminActions.DeadFilter;
import dev.sluice.manager.admin.Audit;
import dev.sluice.manager.admin.DeadEventChanges;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Limits;
import dev.sluice.manager.security.Principal;
import dev.sluice.proto.v1.AdminGrpc;
import dev.sluice.proto.v1.DeadChangeRequest;
import dev.sluice.proto.v1.DeadChangeResponse;
import dev.sluice.proto.v1.Unchanged;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice dead replay|purge NAME --id ID... | --all}: changes dead events through the same
 * compare-and-set on (id, state, epoch) as every other change, so an event that is no longer dead
 * (replayed meanwhile, say) is left alone and reported. Exit 1 when some id was not changed.
 */
abstract class DeadChangeCommand extends BaseCommand {
  static final int BATCH = AdminActions.MAX_IDS;

  /**
   * Who the audit line names for a change run straight against the database: the CLI's user, with
   * every grant (the config's database credentials are the authority here).
   */
  static final Principal OPERATOR =
      new Principal(
          "cli:" + System.getProperty("user.name", "unknown"),
          null,
          null,
          List.of(new Grant(List.of("*"), Set.of(Action.values()), List.of())),
          Limits.NONE);

  @Parameters(index = "0", paramLabel = "NAME", description = "The queue (table) name.")
  String name;

  @ArgGroup(multiplicity = "1")
  Which which;

  /** Exactly one of: ids, or all. */
  static final class Which {
    @Option(
        names = "--id",
        paramLabel = "ID",
        split = ",",
        required = true,
        description = "A dead event's id. Repeatable; commas allowed.")
    List<Long> ids;

    @Option(names = "--all", required = true, description = "Every dead event of the queue.")
    boolean all;
  }

  @Option(
      names = "--shard",
      paramLabel = "SHARD",
      description = "The shard (required with --id when the queue is on several).")
  String shard;

  @Mixin ConfigOption config;

  @Mixin ManagerOption manager;

  /** The verb for messages: replayed, purged. */
  abstract String done();

  /** The change of these ids (1..{@link #BATCH}) on the shard (null: the queue's only one). */
  abstract ChangeResult change(DeadEventChanges changes, String shard, List<Long> ids);

  /** The change of every dead event of the queue on the shard. */
  abstract ChangeResult changeAll(DeadEventChanges changes, String shard);

  /** The Admin API's call for this command. */
  abstract DeadChangeResponse rpc(AdminGrpc.AdminBlockingStub stub, DeadChangeRequest req);

  @Override
  public Integer call() {
    queueName(name);
    long changed = 0;
    List<Object> problems = new ArrayList<>();
    if (manager.given()) {
      // Through the manager: it checks the grant, bounds each call to 1000 ids and audits it.
      List<DeadChangeRequest> calls = new ArrayList<>();
      DeadChangeRequest.Builder base =
          DeadChangeRequest.newBuilder().setQueue(name).setShard(shard == null ? "" : shard);
      if (which.all) {
        calls.add(base.clone().setAll(true).build());
      } else {
        List<Long> ids = List.copyOf(new LinkedHashSet<>(which.ids));
        for (int i = 0; i < ids.size(); i += BATCH) {
          calls.add(
              base.clone().addAllIds(ids.subList(i, Math.min(ids.size(), i + BATCH))).build());
        }
      }
      for (DeadChangeRequest req : calls) {
        DeadChangeResponse r = manager.call(stub -> rpc(stub, req));
        changed += r.getChanged();
        for (Unchanged u : r.getUnchangedList()) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("shard", shard == null ? "" : shard);
          m.put("id", u.getId());
          m.put("problem", u.getWhy());
          problems.add(m);
          if (!json) {
            note("id " + u.getId() + ": " + u.getWhy() + ", left unchanged");
          }
        }
      }
      if (!json) {
        println(done() + " " + changed + " dead events of " + name + " through " + manager.manager);
      }
    } else {
      changed = overSql(problems);
    }
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("queue", name);
      m.put(done(), changed);
      m.put("unchanged", problems);
      printJson(m);
    }
    return problems.isEmpty() ? CliException.OK : CliException.FAILED;
  }

  /**
   * The SQL path: straight to the shards with the config's credentials, through the same operator
   * path as the Admin API ({@link DeadEventChanges}), so each call is audited the same way (the
   * {@code sluice.audit} line, as principal {@link #OPERATOR}).
   */
  private long overSql(List<Object> problems) {
    long changed = 0;
    try (ShardPools pools = new ShardPools(config.load())) {
      DeadEventChanges changes = changes(pools);
      if (which.all) {
        for (ShardPools.Found f : pools.find(name, shard)) {
          long n = changeAll(changes, f.shard().name()).changed();
          changed += n;
          if (!json) {
            println(done() + " " + n + " dead events of " + name + " on shard " + f.shard().name());
          }
        }
      } else {
        List<Long> ids = List.copyOf(new LinkedHashSet<>(which.ids));
        String on = null;
        for (int i = 0; i < ids.size(); i += BATCH) {
          ChangeResult r = change(changes, shard, ids.subList(i, Math.min(ids.size(), i + BATCH)));
          on = r.shard();
          changed += r.changed();
          for (AdminActions.Unchanged u : r.unchanged()) {
            problems.add(problem(r.shard(), u.id(), u.why()));
          }
        }
        if (!json) {
          println(done() + " " + changed + " dead events of " + name + " on shard " + on);
          for (Object p : problems) {
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) p;
            note("id " + m.get("id") + ": " + m.get("problem") + ", left unchanged");
          }
        }
      }
    }
    return changed;
  }

  /**
   * The operator path over the config's own pools: the same grant checks, compare-and-sets and
   * audit line as the Admin API (the metric goes to a registry of this run only).
   */
  static DeadEventChanges changes(ShardPools pools) {
    return new DeadEventChanges(
        new Audit(new SimpleMeterRegistry()),
        (queue, shardName) -> {
          ShardPools.Found f = pools.findOne(queue, shardName);
          OperatorStore store = f.operator();
          return new DeadEventChanges.Target(
              f.shard().name(), store, f.queue().queue().options().ordered(), store::serverTimeNs);
        });
  }

  private static Map<String, Object> problem(String shard, long id, String what) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("shard", shard);
    m.put("id", id);
    m.put("problem", what);
    return m;
  }

  @Command(
      name = "replay",
      mixinStandardHelpOptions = true,
      description =
          "Make dead events pending again, due now: each gets max_attempts more attempts (its"
              + " attempt count, the epoch, is kept). Exit 1 if some id was not"
              + " dead.")
  static final class Replay extends DeadChangeCommand {
    @Override
    String done() {
      return "replayed";
    }

    @Override
    ChangeResult change(DeadEventChanges changes, String shard, List<Long> ids) {
      return changes.replay(OPERATOR, name, shard, ids);
    }

    @Override
    ChangeResult changeAll(DeadEventChanges changes, String shard) {
      return changes.replayAll(OPERATOR, name, shard, DeadFilter.NONE);
    }

    @Override
    DeadChangeResponse rpc(AdminGrpc.AdminBlockingStub stub, DeadChangeRequest req) {
      return stub.replay(req);
    }
  }

  @Command(
      name = "purge",
      mixinStandardHelpOptions = true,
      description = "Delete dead events for good. Exit 1 if some id was not dead.")
  static final class Purge extends DeadChangeCommand {
    @Override
    String done() {
      return "purged";
    }

    @Override
    ChangeResult change(DeadEventChanges changes, String shard, List<Long> ids) {
      return changes.purge(OPERATOR, name, shard, ids);
    }

    @Override
    ChangeResult changeAll(DeadEventChanges changes, String shard) {
      return changes.purgeAll(OPERATOR, name, shard, DeadFilter.NONE);
    }

    @Override
    DeadChangeResponse rpc(AdminGrpc.AdminBlockingStub stub, DeadChangeRequest req) {
      return stub.purge(req);
    }
  }
}
