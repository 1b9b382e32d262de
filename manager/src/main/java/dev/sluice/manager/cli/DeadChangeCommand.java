package dev.sluice.manager.cli;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.OperatorStore;
import dev.sluice.proto.v1.AdminGrpc;
import dev.sluice.proto.v1.DeadChangeRequest;
import dev.sluice.proto.v1.DeadChangeResponse;
import dev.sluice.proto.v1.Unchanged;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
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
  static final int BATCH = 1000;

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

  abstract Map<EventRef, CasOutcome> apply(OperatorStore store, List<EventRef> refs);

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

  /** The SQL path: straight to the shards with the config's credentials. */
  private long overSql(List<Object> problems) {
    long changed = 0;
    try (ShardPools pools = new ShardPools(config.load())) {
      if (which.all) {
        for (ShardPools.Found f : pools.find(name, shard)) {
          long n = all(f.operator());
          changed += n;
          if (!json) {
            println(done() + " " + n + " dead events of " + name + " on shard " + f.shard().name());
          }
        }
      } else {
        ShardPools.Found f = pools.findOne(name, shard);
        OperatorStore store = f.operator();
        List<Long> ids = List.copyOf(new LinkedHashSet<>(which.ids));
        Map<Long, Long> epochs = store.epochs(ids);
        List<EventRef> refs = new ArrayList<>();
        for (Long id : ids) {
          Long epoch = epochs.get(id);
          if (epoch == null) {
            problems.add(problem(f, id, "unknown id"));
          } else {
            refs.add(new EventRef(id, epoch));
          }
        }
        for (Map.Entry<EventRef, CasOutcome> e : apply(store, refs).entrySet()) {
          switch (e.getValue()) {
            case APPLIED -> changed++;
            case STALE -> problems.add(problem(f, e.getKey().id(), "not dead"));
            case UNKNOWN -> problems.add(problem(f, e.getKey().id(), "unknown id"));
          }
        }
        if (!json) {
          println(
              done() + " " + changed + " dead events of " + name + " on shard " + f.shard().name());
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

  /** Every dead event, in batches by id (each batch one CAS per epoch). */
  private long all(OperatorStore store) {
    long n = 0;
    long after = Long.MIN_VALUE; // application-supplied ids may be 0 or negative
    while (true) {
      List<EventRow> rows = store.listDead(after, BATCH);
      if (rows.isEmpty()) {
        return n;
      }
      List<EventRef> refs = new ArrayList<>();
      for (EventRow r : rows) {
        refs.add(new EventRef(r.id(), r.epoch()));
      }
      n += apply(store, refs).values().stream().filter(o -> o == CasOutcome.APPLIED).count();
      after = rows.get(rows.size() - 1).id();
    }
  }

  private static Map<String, Object> problem(ShardPools.Found f, long id, String what) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("shard", f.shard().name());
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
    Map<EventRef, CasOutcome> apply(OperatorStore store, List<EventRef> refs) {
      return store.replayDead(refs);
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
    Map<EventRef, CasOutcome> apply(OperatorStore store, List<EventRef> refs) {
      return store.purgeDead(refs);
    }

    @Override
    DeadChangeResponse rpc(AdminGrpc.AdminBlockingStub stub, DeadChangeRequest req) {
      return stub.purge(req);
    }
  }
}
