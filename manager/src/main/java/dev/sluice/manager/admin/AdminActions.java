package dev.sluice.manager.admin;

import dev.sluice.core.EngineException;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.queue.ReceiverStats;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.QueueControl;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.HaltedKey;
import dev.sluice.db.store.StateCounts;
import dev.sluice.manager.grpc.CountsCache;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Principal;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every operator action in one place, for the gRPC {@code sluice.v1.Admin} service, the status page
 * and the Spring starter: list queues with counts, list and show dead events, replay, purge,
 * cancel, pause, resume, list receivers, list an ordered queue's halted keys and skip their dead
 * events. Each call checks the principal's grant (the narrow action or {@link Action#ADMIN}), is
 * bounded ({@link #MAX_PAGE}, {@link #MAX_IDS}) and is audited: one INFO line on the {@code
 * sluice.audit} logger and the counter {@code
 * sluice_admin_actions_total{action,outcome,principal}}.
 *
 * <p>Every change of an event goes through the store's compare-and-set on (id, state, epoch). The
 * results are plain records, without protobuf types.
 *
 * <p>Threads: stateless apart from the engine it reads; any caller's thread (gRPC executor, the
 * status page's HTTP threads) may call it at once. A call blocks on the database.
 *
 * <p>Errors: {@link AdminDenied} without the grant; {@link EngineException} with INVALID_ARGUMENT
 * (bad input, naming the field), NOT_FOUND (unknown queue, shard or event) or FAILED_PRECONDITION
 * (a queue disabled for a problem).
 */
public final class AdminActions {
  /** The largest page of {@link #listDead}. */
  public static final int MAX_PAGE = 500;

  /** The page size when none is given. */
  public static final int DEFAULT_PAGE = 100;

  /** The most ids one replay, purge or cancel may name. */
  public static final int MAX_IDS = 1000;

  /**
   * The most dead rows one {@link #listDead} call reads while filtering; it then returns a token.
   */
  static final int MAX_SCAN = 5000;

  private static final Logger audit = LoggerFactory.getLogger("sluice.audit");

  private final QueueEngine engine;
  private final MeterRegistry registry;

  /** Counting scans a table: each queue's counts are reused for a second, however many ask. */
  private final CountsCache counts;

  /**
   * The database clock's time now (ns), as shard {@code shard} (any shard of this manager when
   * empty) measures it: what the ages of events are judged against. 0 when no such shard has
   * measured its clock yet.
   */
  public long serverTimeNs(String shard) {
    for (ShardManager s : engine.shards()) {
      if ((shard == null || shard.isEmpty() || s.name().equals(shard)) && s.clock() != null) {
        return s.clock().nowNs();
      }
    }
    return 0;
  }

  /**
   * @param counts the server's one cache of table counts, shared with {@code QueueStats}
   */
  public AdminActions(QueueEngine engine, MeterRegistry registry, CountsCache counts) {
    this.engine = engine;
    this.registry = registry;
    this.counts = counts;
  }

  // ---------------------------------------------------------------- results

  /**
   * A queue on one shard. {@code counts} is null without the {@code stats} grant.
   *
   * @param status SERVING (dispatched here), STANDBY (another manager leads the shard) or DISABLED
   */
  public record QueueSummary(
      String queue,
      String shard,
      String status,
      String problem,
      boolean paused,
      StateCounts counts) {}

  /** Which dead events: every field may be empty (null or 0) for no filtering. */
  public record DeadFilter(
      String reasonContains, String tenant, long createdFromNs, long createdBeforeNs) {
    public static final DeadFilter NONE = new DeadFilter(null, null, 0, 0);

    /** Whether it filters nothing out. */
    boolean isEmpty() {
      return (reasonContains == null || reasonContains.isEmpty())
          && (tenant == null || tenant.isEmpty())
          && createdFromNs == 0
          && createdBeforeNs == 0;
    }

    boolean matches(EventRow r, String reason) {
      if (tenant != null && !tenant.isEmpty() && !tenant.equals(r.tenant())) {
        return false;
      }
      if (createdFromNs != 0 && r.timeCreatedNs() < createdFromNs) {
        return false;
      }
      if (createdBeforeNs != 0 && r.timeCreatedNs() >= createdBeforeNs) {
        return false;
      }
      return reasonContains == null
          || reasonContains.isEmpty()
          || reason.toLowerCase(Locale.ROOT).contains(reasonContains.toLowerCase(Locale.ROOT));
    }
  }

  /** A dead event; {@code attempts} is its epoch; {@code columns} the user columns' values. */
  public record DeadEvent(
      String queue,
      String shard,
      long id,
      long attempts,
      String tenant,
      long timeCreatedNs,
      String reason,
      Map<String, Object> columns) {}

  /** One page; {@code nextPageToken} is null at the end. */
  public record DeadPage(List<DeadEvent> events, String nextPageToken) {}

  /** One event whatever its state; {@code reason} is empty unless dead. */
  public record EventDetail(
      String queue,
      String shard,
      long id,
      String state,
      long epoch,
      String tenant,
      int priority,
      long timeCreatedNs,
      long timeNextNs,
      String reason,
      Map<String, Object> columns) {}

  /** An id left unchanged and why: "not dead", "not pending", "unknown id". */
  public record Unchanged(long id, String why) {}

  /** What a replay, purge or cancel did. */
  public record ChangeResult(String queue, String shard, long changed, List<Unchanged> unchanged) {}

  /** The shards whose pause switch was set. */
  public record PauseResult(String queue, boolean paused, List<String> shards) {}

  /**
   * An ordered queue's halted keys on one shard.
   *
   * @param halting whether the queue stops a key at a dead event ({@code ordering_on_dead=halt});
   *     when false, {@code keys} is empty
   */
  public record HaltedKeys(String queue, String shard, boolean halting, List<HaltedKey> keys) {}

  /** One receiver stream on one queue of this manager. */
  public record ReceiverView(
      String queue,
      String shard,
      String receiverId,
      int inFlight,
      int maxInFlight,
      boolean draining) {}

  // ---------------------------------------------------------------- calls

  /** Every queue the principal may see, per shard, with counts where it has {@code stats}. */
  public List<QueueSummary> listQueues(Principal p) {
    return audited(
        p,
        "list_queues",
        "*",
        "*",
        () -> {
          List<QueueSummary> out = new ArrayList<>();
          for (ShardManager s : engine.shards()) {
            for (String name : new java.util.TreeSet<>(s.discoveredNames())) {
              if (!p.sees(name)) {
                continue;
              }
              QueueManager q = s.queue(name);
              StateCounts c = null;
              if (allows(p, name, Action.STATS)) {
                EventStore st = s.directStore(name);
                c = st == null ? null : counts.counts(s.name(), name, st::counts);
              }
              out.add(
                  new QueueSummary(
                      name,
                      s.name(),
                      q != null ? "SERVING" : "STANDBY",
                      "",
                      q != null && q.paused(),
                      c));
            }
            s.disabled()
                .forEach(
                    (name, problem) -> {
                      if (p.sees(name)) {
                        out.add(new QueueSummary(name, s.name(), "DISABLED", problem, false, null));
                      }
                    });
          }
          return new Outcome<>(out, out.size());
        });
  }

  /**
   * One page of dead events of {@code queue} on one shard, by id, that match {@code filter} and the
   * principal's tenants. Reads at most {@link #MAX_SCAN} rows: a page may be short with a token.
   *
   * @param pageSize 1..{@link #MAX_PAGE}, or 0 for {@link #DEFAULT_PAGE}
   * @param pageToken null or empty for the first page, else a previous page's token
   */
  public DeadPage listDead(
      Principal p, String queue, String shard, DeadFilter filter, int pageSize, String pageToken) {
    return audited(
        p,
        "list_dead",
        queue,
        shard,
        () -> {
          require(p, queue, Action.STATS);
          if (pageSize < 0 || pageSize > MAX_PAGE) {
            throw invalid(
                "page_size must be 1.."
                    + MAX_PAGE
                    + " (0 = "
                    + DEFAULT_PAGE
                    + "), was "
                    + pageSize
                    + " (queue "
                    + queue
                    + ")");
          }
          int size = pageSize == 0 ? DEFAULT_PAGE : pageSize;
          long after = decodeToken(queue, pageToken);
          DeadFilter f = filter == null ? DeadFilter.NONE : filter;
          Predicate<String> tenants = tenants(p, queue, Action.STATS);
          Located at = locate(queue, shard);
          List<DeadEvent> out = new ArrayList<>();
          int scanned = 0;
          while (true) {
            int want = f.isEmpty() ? size - out.size() : MAX_PAGE;
            List<EventRow> rows = at.store().listDead(after, want);
            Map<Long, String> reasons =
                at.store().deadReasons(rows.stream().map(EventRow::id).toList());
            for (EventRow r : rows) {
              after = r.id();
              String reason = reasons.getOrDefault(r.id(), "");
              if (tenants.test(r.tenant()) && f.matches(r, reason)) {
                out.add(dead(queue, at.shard().name(), r, reason));
                if (out.size() == size) {
                  return new Outcome<>(new DeadPage(out, encodeToken(after)), out.size());
                }
              }
            }
            scanned += rows.size();
            if (rows.size() < want) {
              return new Outcome<>(new DeadPage(out, null), out.size());
            }
            if (scanned >= MAX_SCAN) {
              return new Outcome<>(new DeadPage(out, encodeToken(after)), out.size());
            }
          }
        });
  }

  /**
   * One event, whatever its state. NOT_FOUND when there is none (or not of the principal's
   * tenants).
   */
  public EventDetail showEvent(Principal p, String queue, String shard, long id) {
    return audited(
        p,
        "show_event",
        queue,
        shard,
        () -> {
          require(p, queue, Action.STATS);
          Located at = locate(queue, shard);
          Optional<EventStore.Found> found = at.store().find(id);
          if (found.isEmpty()
              || !tenants(p, queue, Action.STATS).test(found.get().row().tenant())) {
            throw new EngineException(
                EngineException.Kind.NOT_FOUND,
                "no event " + id + " in queue " + queue + " on shard " + at.shard().name());
          }
          EventRow r = found.get().row();
          String state =
              found.get().state() == null
                  ? "unknown"
                  : found.get().state().name().toLowerCase(Locale.ROOT);
          String reason =
              "dead".equals(state) ? at.store().deadReasons(List.of(id)).getOrDefault(id, "") : "";
          return new Outcome<>(
              new EventDetail(
                  queue,
                  at.shard().name(),
                  r.id(),
                  state,
                  r.epoch(),
                  r.tenant(),
                  r.priority(),
                  r.timeCreatedNs(),
                  r.timeNextNs(),
                  reason,
                  r.userColumns()),
              1);
        });
  }

  /** dead → pending, due now, for the ids given (1..{@link #MAX_IDS}). */
  public ChangeResult replay(Principal p, String queue, String shard, List<Long> ids) {
    return deadChange(p, "replay", Action.REPLAY, queue, shard, ids, null, EventStore::replayDead);
  }

  /** dead → pending for every dead event of the queue on the shard that matches the filter. */
  public ChangeResult replayAll(Principal p, String queue, String shard, DeadFilter filter) {
    return deadChange(
        p, "replay", Action.REPLAY, queue, shard, null, nonNull(filter), EventStore::replayDead);
  }

  /** Deletes the dead events given (1..{@link #MAX_IDS}). */
  public ChangeResult purge(Principal p, String queue, String shard, List<Long> ids) {
    return deadChange(p, "purge", Action.PURGE, queue, shard, ids, null, EventStore::purgeDead);
  }

  /** Deletes every dead event of the queue on the shard that matches the filter. */
  public ChangeResult purgeAll(Principal p, String queue, String shard, DeadFilter filter) {
    return deadChange(
        p, "purge", Action.PURGE, queue, shard, null, nonNull(filter), EventStore::purgeDead);
  }

  /** pending → cancelled for the ids given (1..{@link #MAX_IDS}). */
  public ChangeResult cancel(Principal p, String queue, String shard, List<Long> ids) {
    return audited(
        p,
        "cancel",
        queue,
        shard,
        () -> {
          require(p, queue, Action.CANCEL);
          List<Long> unique = checkIds(queue, ids);
          Located at = locate(queue, shard);
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

  /**
   * Sets the queue's pause switch on one shard, or on every shard of this manager that has the
   * queue ({@code shard} null or empty). This manager applies it before answering (it runs a
   * discovery round of each shard on the caller's thread); every other manager reads the switch at
   * its next discovery round.
   */
  public PauseResult pause(Principal p, String queue, String shard) {
    return setPaused(p, queue, shard, true);
  }

  /** The opposite of {@link #pause}. */
  public PauseResult resume(Principal p, String queue, String shard) {
    return setPaused(p, queue, shard, false);
  }

  /** The receiver streams on the queue (or every queue with {@code stats}) dispatched here. */
  public List<ReceiverView> listReceivers(Principal p, String queue) {
    boolean one = queue != null && !queue.isEmpty();
    return audited(
        p,
        "list_receivers",
        one ? queue : "*",
        "*",
        () -> {
          if (one) {
            require(p, queue, Action.STATS);
            if (!engine.knows(queue)) {
              throw notFound(queue);
            }
          }
          List<ReceiverView> out = new ArrayList<>();
          for (QueueManager q : engine.served()) {
            if ((one && !q.queue().equals(queue)) || !allows(p, q.queue(), Action.STATS)) {
              continue;
            }
            for (ReceiverStats r : q.receivers()) {
              out.add(
                  new ReceiverView(
                      q.queue(),
                      q.shard(),
                      r.receiverId(),
                      r.inFlight(),
                      r.maxInFlight(),
                      r.draining()));
            }
          }
          return new Outcome<>(out, out.size());
        });
  }

  /**
   * The keys of an ordered queue ({@code ordering_on_dead=halt}) stopped at a dead event on one
   * shard, by the dead event's id: each with its dead event and how many events wait behind it. Not
   * a halting queue: {@code halting} false and no keys. A grant narrowed to tenants sees the keys
   * whose dead event is of its tenants.
   *
   * @param limit 1..{@link #MAX_PAGE}, or 0 for {@link #DEFAULT_PAGE}
   */
  public HaltedKeys listHalted(Principal p, String queue, String shard, int limit) {
    return audited(
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
          Located at = locate(queue, shard);
          QueueTable t = at.shard().table(queue);
          boolean halting = t != null && t.options().haltOnDead();
          List<HaltedKey> keys = new ArrayList<>();
          if (halting) {
            List<HaltedKey> all = at.store().haltedKeys(limit == 0 ? DEFAULT_PAGE : limit);
            if (narrowed(p, queue, Action.STATS)) {
              Predicate<String> tenants = tenants(p, queue, Action.STATS);
              for (HaltedKey k : all) {
                Optional<EventStore.Found> f = at.store().find(k.deadId());
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

  /**
   * Skips dead events of an ordered queue (1..{@link #MAX_IDS} ids): each becomes {@code cancelled}
   * (a compare-and-set on its epoch) and, where it halted its key, the key's next event goes.
   * INVALID_ARGUMENT for a queue that is not ordered; an id that is not dead is left unchanged
   * ("not dead").
   */
  public ChangeResult skipDead(Principal p, String queue, String shard, List<Long> ids) {
    return audited(
        p,
        "skip_dead",
        queue,
        shard,
        () -> {
          require(p, queue, Action.REPLAY);
          List<Long> unique = checkIds(queue, ids);
          Located at = locate(queue, shard);
          QueueTable t = at.shard().table(queue);
          if (t == null || !t.options().ordered()) {
            throw invalid(
                "queue "
                    + queue
                    + " on shard "
                    + at.shard().name()
                    + " is not ordered: skip is for a key halted at a dead event (ordering=key"
                    + " or queue); purge or replay dead events instead");
          }
          EventStore store = at.store();
          Predicate<String> tenants = tenants(p, queue, Action.REPLAY);
          boolean narrow = narrowed(p, queue, Action.REPLAY);
          long now = now(at);
          long changed = 0;
          List<Unchanged> left = new ArrayList<>();
          Map<Long, Long> epochs = store.epochs(unique);
          for (Long id : unique) {
            Long epoch = epochs.get(id);
            if (epoch != null && narrow) {
              // A narrowed grant: another tenant's event is answered as an unknown id.
              Optional<EventStore.Found> f = store.find(id);
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
              new ChangeResult(queue, at.shard().name(), changed, left),
              changed,
              at.shard().name());
        });
  }

  /** The shard's database clock now (ns): its measured clock, else one query. */
  private static long now(Located at) {
    return at.shard().clock() != null && at.shard().clock().synced()
        ? at.shard().clock().nowNs()
        : at.store().serverTimeNs();
  }

  // ---------------------------------------------------------------- grants

  /** Whether the principal may do {@code a} on the queue: that action or {@code admin}. */
  public static boolean allows(Principal p, String queue, Action a) {
    return p.allows(queue, a) || p.allows(queue, Action.ADMIN);
  }

  private static void require(Principal p, String queue, Action a) {
    checkQueue(queue);
    if (!allows(p, queue, a)) {
      throw new AdminDenied(p.name(), a, queue);
    }
  }

  /**
   * The tenants of the grants giving {@code a} (or admin) on the queue; any when one names none.
   */
  private static Predicate<String> tenants(Principal p, String queue, Action a) {
    if (!narrowed(p, queue, a)) {
      return t -> true;
    }
    Set<String> ts = new java.util.HashSet<>();
    grants(p, queue, a).forEach(g -> ts.addAll(g.tenants()));
    return ts::contains;
  }

  /** Whether the grants giving {@code a} (or admin) on the queue all name tenants. */
  private static boolean narrowed(Principal p, String queue, Action a) {
    List<Grant> gs = grants(p, queue, a);
    return !gs.isEmpty() && gs.stream().noneMatch(g -> g.tenants().isEmpty());
  }

  private static List<Grant> grants(Principal p, String queue, Action a) {
    return p.grants().stream()
        .filter(g -> g.allows(queue, a) || g.allows(queue, Action.ADMIN))
        .toList();
  }

  // ---------------------------------------------------------------- internals

  private ChangeResult deadChange(
      Principal p,
      String action,
      Action grant,
      String queue,
      String shard,
      List<Long> ids,
      DeadFilter filter,
      ChangeFn fn) {
    return audited(
        p,
        action,
        queue,
        shard,
        () -> {
          require(p, queue, grant);
          List<Long> unique = filter == null ? checkIds(queue, ids) : List.of();
          Located at = locate(queue, shard);
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
              new ChangeResult(queue, at.shard().name(), changed, left),
              changed,
              at.shard().name());
        });
  }

  private PauseResult setPaused(Principal p, String queue, String shard, boolean paused) {
    return audited(
        p,
        paused ? "pause" : "resume",
        queue,
        shard == null || shard.isEmpty() ? "*" : shard,
        () -> {
          require(p, queue, Action.PAUSE);
          List<ShardManager> on = new ArrayList<>();
          if (shard == null || shard.isEmpty()) {
            for (ShardManager s : engine.shards()) {
              if (s.knows(queue)) {
                on.add(s);
              }
            }
            if (on.isEmpty()) {
              throw notFound(queue);
            }
          } else {
            on.add(locate(queue, shard).shard());
          }
          List<String> names = new ArrayList<>();
          for (ShardManager s : on) {
            // The switch every manager reads at discovery (sluice_queue_control, migration V2).
            new QueueControl(s.dataSource()).setPaused(queue, paused);
            // A discovery round here, on the caller's thread: rounds are serialized, so a round
            // that read the old switch finishes first and cannot undo this one afterwards.
            s.discover();
            names.add(s.name());
          }
          return new Outcome<>(new PauseResult(queue, paused, names), names.size());
        });
  }

  /** A queue's shard and store. */
  private record Located(ShardManager shard, EventStore store) {}

  private Located locate(String queue, String shard) {
    checkQueue(queue);
    ShardManager s;
    if (shard == null || shard.isEmpty()) {
      List<ShardManager> all = engine.shards();
      if (all.size() != 1) {
        throw invalid(
            "shard is required: this manager has several shards ("
                + String.join(", ", all.stream().map(ShardManager::name).toList())
                + "); event ids are unique per shard only");
      }
      s = all.get(0);
    } else {
      s =
          engine
              .shard(shard)
              .orElseThrow(
                  () ->
                      new EngineException(
                          EngineException.Kind.NOT_FOUND,
                          "shard: no shard named '" + shard + "' here"));
    }
    EventStore store = s.directStore(queue);
    if (store == null) {
      String problem = s.disabled().get(queue);
      if (problem != null) {
        throw new EngineException(EngineException.Kind.FAILED_PRECONDITION, problem);
      }
      throw new EngineException(
          EngineException.Kind.NOT_FOUND, "queue: no queue '" + queue + "' on shard " + s.name());
    }
    return new Located(s, store);
  }

  private static void checkQueue(String queue) {
    if (queue == null || queue.isBlank()) {
      throw invalid("queue is required");
    }
    if (queue.length() > 64) {
      throw invalid("queue: a queue is a table, its name at most 64 characters");
    }
  }

  private static List<Long> checkIds(String queue, List<Long> ids) {
    if (ids == null || ids.isEmpty() || ids.size() > MAX_IDS) {
      throw invalid(
          "ids: give 1.."
              + MAX_IDS
              + " ids, got "
              + (ids == null ? 0 : ids.size())
              + " (queue "
              + queue
              + ")");
    }
    return List.copyOf(new LinkedHashSet<>(ids));
  }

  private static DeadFilter nonNull(DeadFilter f) {
    return f == null ? DeadFilter.NONE : f;
  }

  private static EngineException invalid(String message) {
    return new EngineException(EngineException.Kind.INVALID_ARGUMENT, message);
  }

  private static EngineException notFound(String queue) {
    return new EngineException(
        EngineException.Kind.NOT_FOUND, "queue: no queue '" + queue + "' on this manager");
  }

  private static DeadEvent dead(String queue, String shard, EventRow r, String reason) {
    return new DeadEvent(
        queue, shard, r.id(), r.epoch(), r.tenant(), r.timeCreatedNs(), reason, r.userColumns());
  }

  /** The page token of the page after {@code afterId} (for callers that page by id). */
  public static String pageTokenAfter(long afterId) {
    return encodeToken(afterId);
  }

  static String encodeToken(long afterId) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(("after:" + afterId).getBytes(StandardCharsets.UTF_8));
  }

  static long decodeToken(String queue, String token) {
    if (token == null || token.isEmpty()) {
      return Long.MIN_VALUE;
    }
    try {
      String s = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
      if (s.startsWith("after:")) {
        return Long.parseLong(s.substring(6));
      }
    } catch (IllegalArgumentException e) {
      // falls through
    }
    throw invalid("page_token: not a token this API gave (queue " + queue + ")");
  }

  @FunctionalInterface
  private interface ChangeFn {
    Map<EventRef, CasOutcome> apply(EventStore store, List<EventRef> refs);
  }

  /** A call's result, how many things it concerned and on which shard (for the audit line). */
  private record Outcome<T>(T value, long count, String shard) {
    Outcome(T value, long count) {
      this(value, count, null);
    }
  }

  /** Runs {@code body}, then writes the audit line and counts the call, whatever its outcome. */
  private <T> T audited(
      Principal p,
      String action,
      String queue,
      String shard,
      java.util.function.Supplier<Outcome<T>> body) {
    String where = shard == null || shard.isEmpty() ? "-" : shard;
    try {
      Outcome<T> o = body.get();
      audit.info(
          "principal={} action={} queue={} shard={} count={} outcome=ok",
          p.name(),
          action,
          queue,
          o.shard() != null ? o.shard() : where,
          o.count());
      count(action, "ok", p);
      return o.value();
    } catch (AdminDenied e) {
      audit.info(
          "principal={} action={} queue={} shard={} count=0 outcome=denied",
          p.name(),
          action,
          queue,
          where);
      count(action, "denied", p);
      throw e;
    } catch (RuntimeException e) {
      audit.info(
          "principal={} action={} queue={} shard={} count=0 outcome=failed ({})",
          p.name(),
          action,
          queue,
          where,
          e.getMessage());
      count(action, "failed", p);
      throw e;
    }
  }

  private void count(String action, String outcome, Principal p) {
    Counter.builder("sluice_admin_actions")
        .description("Operator actions through the admin API, by outcome (ok, denied, failed)")
        .tag("action", action)
        .tag("outcome", outcome)
        .tag("principal", p.name())
        .register(registry)
        .increment();
  }
}
