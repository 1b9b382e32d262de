package dev.sluice.manager.admin;

import static dev.sluice.manager.admin.Grants.checkIds;
import static dev.sluice.manager.admin.Grants.require;
import static dev.sluice.manager.admin.Grants.tenants;

import dev.sluice.core.QueueEngine;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.manager.admin.AdminActions.ChangeResult;
import dev.sluice.manager.admin.AdminActions.Unchanged;
import dev.sluice.manager.admin.Audit.Outcome;
import dev.sluice.manager.admin.ShardLocator.Located;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Cancels of pending events through the engine (pending → cancelled, a compare-and-set). */
final class Cancels {
  private final Audit audit;
  private final QueueEngine engine;
  private final ShardLocator shards;

  Cancels(Audit audit, QueueEngine engine, ShardLocator shards) {
    this.audit = audit;
    this.engine = engine;
    this.shards = shards;
  }

  /** pending → cancelled for the ids given (1..{@link AdminActions#MAX_IDS}). */
  public ChangeResult cancel(Principal p, String queue, String shard, List<Long> ids) {
    return audit.audited(
        p,
        "cancel",
        queue,
        shard,
        () -> {
          require(p, queue, Action.CANCEL);
          List<Long> unique = checkIds(queue, ids);
          Located at = shards.locate(queue, shard);
          Map<Long, CasOutcome> r =
              engine.cancel(queue, at.shard().name(), unique, tenants(p, queue, Action.CANCEL));
          long changed = 0;
          List<Unchanged> left = new ArrayList<>();
          for (Map.Entry<Long, CasOutcome> e : r.entrySet()) {
            switch (e.getValue()) {
              case APPLIED -> changed++;
              case STALE -> left.add(new Unchanged(e.getKey(), "not pending"));
              case UNKNOWN -> left.add(new Unchanged(e.getKey(), "unknown id"));
            }
          }
          return new Outcome<>(
              new ChangeResult(queue, at.shard().name(), changed, left),
              changed,
              at.shard().name());
        });
  }
}
