package dev.sluice.manager.admin;

import static dev.sluice.manager.admin.AdminActions.DEFAULT_PAGE;
import static dev.sluice.manager.admin.AdminActions.MAX_PAGE;
import static dev.sluice.manager.admin.Grants.invalid;
import static dev.sluice.manager.admin.Grants.narrowed;
import static dev.sluice.manager.admin.Grants.require;
import static dev.sluice.manager.admin.Grants.tenants;

import dev.sluice.db.QueueTable;
import dev.sluice.db.store.HaltedKey;
import dev.sluice.db.store.OperatorStore;
import dev.sluice.manager.admin.AdminActions.HaltedKeys;
import dev.sluice.manager.admin.Audit.Outcome;
import dev.sluice.manager.admin.ShardLocator.Located;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * An ordered queue's keys halted at a dead event, by the dead event's id (skipping those dead
 * events is {@link DeadEventChanges#skip}).
 */
final class OrderedKeys {
  private final Audit audit;
  private final ShardLocator shards;

  OrderedKeys(Audit audit, ShardLocator shards) {
    this.audit = audit;
    this.shards = shards;
  }

  /**
   * The keys of an ordered queue ({@code ordering_on_dead=halt}) stopped at a dead event on one
   * shard, by the dead event's id: each with its dead event and how many events wait behind it. Not
   * a halting queue: {@code halting} false and no keys. A grant narrowed to tenants sees the keys
   * whose dead event is of its tenants.
   *
   * @param limit 1..{@link AdminActions#MAX_PAGE}, or 0 for {@link AdminActions#DEFAULT_PAGE}
   */
  public HaltedKeys listHalted(Principal p, String queue, String shard, int limit) {
    return audit.audited(
        p,
        "list_halted",
        queue,
        shard,
        () -> {
          require(p, queue, Action.STATS);
          if (limit < 0 || limit > MAX_PAGE) {
            throw invalid(
                "limit must be 1.."
                    + MAX_PAGE
                    + " (0 = "
                    + DEFAULT_PAGE
                    + "), was "
                    + limit
                    + " (queue "
                    + queue
                    + ")");
          }
          Located at = shards.locate(queue, shard);
          QueueTable t = at.shard().table(queue);
          boolean halting = t != null && t.options().haltOnDead();
          List<HaltedKey> keys = new ArrayList<>();
          if (halting) {
            List<HaltedKey> all = at.store().haltedKeys(limit == 0 ? DEFAULT_PAGE : limit);
            if (narrowed(p, queue, Action.STATS)) {
              Predicate<String> tenants = tenants(p, queue, Action.STATS);
              for (HaltedKey k : all) {
                Optional<OperatorStore.Found> f = at.store().find(k.deadId());
                if (f.isPresent() && tenants.test(f.get().row().tenant())) {
                  keys.add(k);
                }
              }
            } else {
              keys.addAll(all);
            }
          }
          return new Outcome<>(
              new HaltedKeys(queue, at.shard().name(), halting, keys),
              keys.size(),
              at.shard().name());
        });
  }
}
