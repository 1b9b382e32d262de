package dev.sluice.manager.admin;

import static dev.sluice.manager.admin.AdminActions.MAX_IDS;
import static dev.sluice.manager.admin.Grants.checkIds;
import static dev.sluice.manager.admin.Grants.narrowed;
import static dev.sluice.manager.admin.Grants.require;
import static dev.sluice.manager.admin.Grants.tenants;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.EventStore;
import dev.sluice.manager.admin.AdminActions.ChangeResult;
import dev.sluice.manager.admin.AdminActions.DeadFilter;
import dev.sluice.manager.admin.AdminActions.Unchanged;
import dev.sluice.manager.admin.Audit.Outcome;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Replays and purges of dead events, by id or by filter: each a compare-and-set on (id, state,
 * epoch), checked against the principal's grant and audited. The one operator path for these
 * changes: the Admin API and the status page reach it through {@link AdminActions} (stores of this
 * manager's shards); the CLI run straight against the database builds one on its own pools.
 */
public final class DeadEventChanges {
  /** A queue's store on one shard, and that shard's name. */
  public record Target(String shard, EventStore store) {}

  /**
   * Finds the queue's store on the shard named (or its only shard, when {@code shard} is empty).
   */
  @FunctionalInterface
  public interface Stores {
    Target locate(String queue, String shard);
  }

  private final Audit audit;
  private final Stores stores;

  public DeadEventChanges(Audit audit, Stores stores) {
    this.audit = audit;
    this.stores = stores;
  }

  /** dead → pending, due now, for the ids given (1..{@link AdminActions#MAX_IDS}). */
  public ChangeResult replay(Principal p, String queue, String shard, List<Long> ids) {
    return change(p, "replay", Action.REPLAY, queue, shard, ids, null, EventStore::replayDead);
  }

  /** dead → pending for every dead event of the queue on the shard that matches the filter. */
  public ChangeResult replayAll(Principal p, String queue, String shard, DeadFilter filter) {
    return change(
        p, "replay", Action.REPLAY, queue, shard, null, nonNull(filter), EventStore::replayDead);
  }

  /** Deletes the dead events given (1..{@link AdminActions#MAX_IDS}). */
  public ChangeResult purge(Principal p, String queue, String shard, List<Long> ids) {
    return change(p, "purge", Action.PURGE, queue, shard, ids, null, EventStore::purgeDead);
  }

  /** Deletes every dead event of the queue on the shard that matches the filter. */
  public ChangeResult purgeAll(Principal p, String queue, String shard, DeadFilter filter) {
    return change(
        p, "purge", Action.PURGE, queue, shard, null, nonNull(filter), EventStore::purgeDead);
  }

  private ChangeResult change(
      Principal p,
      String action,
      Action grant,
      String queue,
      String shard,
      List<Long> ids,
      DeadFilter filter,
      ChangeFn fn) {
    return audit.audited(
        p,
        action,
        queue,
        shard,
        () -> {
          require(p, queue, grant);
          List<Long> unique = filter == null ? checkIds(queue, ids) : List.of();
          Target at = stores.locate(queue, shard);
          EventStore store = at.store();
          Predicate<String> tenants = tenants(p, queue, grant);
          long changed = 0;
          List<Unchanged> left = new ArrayList<>();
          if (filter == null) {
            Map<Long, Long> epochs = store.epochs(unique);
            List<EventRef> refs = new ArrayList<>();
            for (Long id : unique) {
              Long epoch = epochs.get(id);
              if (epoch == null) {
                left.add(new Unchanged(id, "unknown id"));
              } else {
                refs.add(new EventRef(id, epoch));
              }
            }
            if (narrowed(p, queue, grant)) {
              // A narrowed grant: another tenant's event is answered as an unknown id.
              List<EventRef> mine = new ArrayList<>();
              for (EventRef r : refs) {
                Optional<EventStore.Found> f = store.find(r.id());
                if (f.isPresent() && tenants.test(f.get().row().tenant())) {
                  mine.add(r);
                } else {
                  left.add(new Unchanged(r.id(), "unknown id"));
                }
              }
              refs = mine;
            }
            for (Map.Entry<EventRef, CasOutcome> e : fn.apply(store, refs).entrySet()) {
              switch (e.getValue()) {
                case APPLIED -> changed++;
                case STALE -> left.add(new Unchanged(e.getKey().id(), "not dead"));
                case UNKNOWN -> left.add(new Unchanged(e.getKey().id(), "unknown id"));
              }
            }
          } else {
            long after = Long.MIN_VALUE;
            while (true) {
              List<EventRow> rows = store.listDead(after, MAX_IDS);
              if (rows.isEmpty()) {
                break;
              }
              Map<Long, String> reasons =
                  filter.reasonContains() == null || filter.reasonContains().isEmpty()
                      ? Map.of()
                      : store.deadReasons(rows.stream().map(EventRow::id).toList());
              List<EventRef> refs = new ArrayList<>();
              for (EventRow r : rows) {
                if (tenants.test(r.tenant())
                    && filter.matches(r, reasons.getOrDefault(r.id(), ""))) {
                  refs.add(new EventRef(r.id(), r.epoch()));
                }
              }
              changed +=
                  fn.apply(store, refs).values().stream()
                      .filter(o -> o == CasOutcome.APPLIED)
                      .count();
              after = rows.get(rows.size() - 1).id();
            }
          }
          return new Outcome<>(
              new ChangeResult(queue, at.shard(), changed, left), changed, at.shard());
        });
  }

  private static DeadFilter nonNull(DeadFilter f) {
    return f == null ? DeadFilter.NONE : f;
  }

  @FunctionalInterface
  private interface ChangeFn {
    Map<EventRef, CasOutcome> apply(EventStore store, List<EventRef> refs);
  }
}
