package dev.sluice.manager.admin;

import static dev.sluice.manager.admin.AdminActions.MAX_IDS;
import static dev.sluice.manager.admin.Grants.checkIds;
import static dev.sluice.manager.admin.Grants.invalid;
import static dev.sluice.manager.admin.Grants.narrowed;
import static dev.sluice.manager.admin.Grants.require;
import static dev.sluice.manager.admin.Grants.tenants;

import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.OperatorStore;
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
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Replays and purges of dead events, by id or by filter, and skips of an ordered queue's dead
 * events: each a compare-and-set on (id, state, epoch), checked against the principal's grant and
 * audited. The one operator path for these changes: the Admin API and the status page reach it
 * through {@link AdminActions} (stores of this manager's shards); the CLI run straight against the
 * database builds one on its own pools.
 */
public final class DeadEventChanges {
  /**
   * A queue's store on one shard.
   *
   * @param shard the shard's name
   * @param ordered whether the queue is ordered (ordering=key or queue): only then may its dead
   *     events be skipped
   * @param nowNs the shard's database clock now (ns), for a skip
   */
  public record Target(String shard, OperatorStore store, boolean ordered, LongSupplier nowNs) {}

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
    return change(p, "replay", Action.REPLAY, queue, shard, ids, null, OperatorStore::replayDead);
  }

  /** dead → pending for every dead event of the queue on the shard that matches the filter. */
  public ChangeResult replayAll(Principal p, String queue, String shard, DeadFilter filter) {
    return change(
        p, "replay", Action.REPLAY, queue, shard, null, nonNull(filter), OperatorStore::replayDead);
  }

  /** Deletes the dead events given (1..{@link AdminActions#MAX_IDS}). */
  public ChangeResult purge(Principal p, String queue, String shard, List<Long> ids) {
    return change(p, "purge", Action.PURGE, queue, shard, ids, null, OperatorStore::purgeDead);
  }

  /** Deletes every dead event of the queue on the shard that matches the filter. */
  public ChangeResult purgeAll(Principal p, String queue, String shard, DeadFilter filter) {
    return change(
        p, "purge", Action.PURGE, queue, shard, null, nonNull(filter), OperatorStore::purgeDead);
  }

  /**
   * Skips dead events of an ordered queue (1..{@link AdminActions#MAX_IDS} ids): each becomes
   * {@code cancelled} (a compare-and-set on its epoch) and, where it halted its key, the key's next
   * event goes. INVALID_ARGUMENT for a queue that is not ordered; an id that is not dead is left
   * unchanged ("not dead").
   */
  public ChangeResult skip(Principal p, String queue, String shard, List<Long> ids) {
    return audit.audited(
        p,
        "skip_dead",
        queue,
        shard,
        () -> {
          require(p, queue, Action.REPLAY);
          List<Long> unique = checkIds(queue, ids);
          Target at = stores.locate(queue, shard);
          if (!at.ordered()) {
            throw invalid(
                "queue "
                    + queue
                    + " on shard "
                    + at.shard()
                    + " is not ordered: skip is for a key halted at a dead event (ordering=key"
                    + " or queue); purge or replay dead events instead");
          }
          OperatorStore store = at.store();
          Predicate<String> tenants = tenants(p, queue, Action.REPLAY);
          boolean narrow = narrowed(p, queue, Action.REPLAY);
          long now = at.nowNs().getAsLong();
          long changed = 0;
          List<Unchanged> left = new ArrayList<>();
          Map<Long, Long> epochs = store.epochs(unique);
          for (Long id : unique) {
            Long epoch = epochs.get(id);
            if (epoch != null && narrow) {
              // A narrowed grant: another tenant's event is answered as an unknown id.
              Optional<OperatorStore.Found> f = store.find(id);
              if (f.isEmpty() || !tenants.test(f.get().row().tenant())) {
                epoch = null;
              }
            }
            if (epoch == null) {
              left.add(new Unchanged(id, "unknown id"));
              continue;
            }
            switch (store.skipDead(new EventRef(id, epoch), now)) {
              case APPLIED -> changed++;
              case STALE -> left.add(new Unchanged(id, "not dead"));
              case UNKNOWN -> left.add(new Unchanged(id, "unknown id"));
            }
          }
          return new Outcome<>(
              new ChangeResult(queue, at.shard(), changed, left), changed, at.shard());
        });
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
          OperatorStore store = at.store();
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
                Optional<OperatorStore.Found> f = store.find(r.id());
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
    Map<EventRef, CasOutcome> apply(OperatorStore store, List<EventRef> refs);
  }
}
