package dev.sluice.manager.admin;

import dev.sluice.core.EngineException;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.HaltedKey;
import dev.sluice.db.store.StateCounts;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Principal;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Every operator action behind one door, for the gRPC {@code sluice.v1.Admin} service, the status
 * page and the Spring starter: list queues with counts, list and show dead events, replay, purge,
 * cancel, pause, resume, list receivers, list an ordered queue's halted keys and skip their dead
 * events. Each call checks the principal's grant (the narrow action or {@link Action#ADMIN}), is
 * bounded ({@link #MAX_PAGE}, {@link #MAX_IDS}) and is audited: one INFO line on the {@code
 * sluice.audit} logger and the counter {@code
 * sluice_admin_actions_total{action,outcome,principal}}.
 *
 * <p>Each job is its own class in this package: {@link QueueListings}, {@link DeadEventQueries},
 * {@link DeadEventChanges} (also the CLI's path straight to the database), {@link Cancels}, {@link
 * PauseSwitch}, {@link OrderedKeys}; {@link Grants} checks the principal and {@link Audit} writes
 * the audit line. This class holds the result records and hands each call to its job.
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

  private final QueueEngine engine;
  private final QueueListings listings;
  private final DeadEventQueries deadQueries;
  private final DeadEventChanges deadChanges;
  private final Cancels cancels;
  private final PauseSwitch pauses;
  private final OrderedKeys orderedKeys;

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
    Audit audit = new Audit(registry);
    ShardLocator shards = new ShardLocator(engine);
    this.listings = new QueueListings(audit, engine, counts);
    this.deadQueries = new DeadEventQueries(audit, shards);
    this.deadChanges =
        new DeadEventChanges(
            audit,
            (queue, shard) -> {
              ShardLocator.Located at = shards.locate(queue, shard);
              QueueTable t = at.shard().table(queue);
              return new DeadEventChanges.Target(
                  at.shard().name(),
                  at.store(),
                  t != null && t.options().ordered(),
                  () -> ShardLocator.now(at));
            });
    this.cancels = new Cancels(audit, engine, shards);
    this.pauses = new PauseSwitch(audit, engine, shards);
    this.orderedKeys = new OrderedKeys(audit, shards);
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
      Map<String, Object> columns) {

    /**
     * The ack deadline of a fired event ({@code time_next}: fire + ack_wait, moved later by its
     * receiver's extensions), 0 in any other state.
     */
    public long deadlineNs() {
      return "fired".equals(state) ? timeNextNs : 0;
    }
  }

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
    return listings.listQueues(p);
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
    return deadQueries.listDead(p, queue, shard, filter, pageSize, pageToken);
  }

  /**
   * One event, whatever its state. NOT_FOUND when there is none (or not of the principal's
   * tenants).
   */
  public EventDetail showEvent(Principal p, String queue, String shard, long id) {
    return deadQueries.showEvent(p, queue, shard, id);
  }

  /** dead → pending, due now, for the ids given (1..{@link #MAX_IDS}). */
  public ChangeResult replay(Principal p, String queue, String shard, List<Long> ids) {
    return deadChanges.replay(p, queue, shard, ids);
  }

  /** dead → pending for every dead event of the queue on the shard that matches the filter. */
  public ChangeResult replayAll(Principal p, String queue, String shard, DeadFilter filter) {
    return deadChanges.replayAll(p, queue, shard, filter);
  }

  /** Deletes the dead events given (1..{@link #MAX_IDS}). */
  public ChangeResult purge(Principal p, String queue, String shard, List<Long> ids) {
    return deadChanges.purge(p, queue, shard, ids);
  }

  /** Deletes every dead event of the queue on the shard that matches the filter. */
  public ChangeResult purgeAll(Principal p, String queue, String shard, DeadFilter filter) {
    return deadChanges.purgeAll(p, queue, shard, filter);
  }

  /** pending → cancelled for the ids given (1..{@link #MAX_IDS}). */
  public ChangeResult cancel(Principal p, String queue, String shard, List<Long> ids) {
    return cancels.cancel(p, queue, shard, ids);
  }

  /**
   * Sets the queue's pause switch on one shard, or on every shard of this manager that has the
   * queue ({@code shard} null or empty). This manager applies it before answering (it runs a
   * discovery round of each shard on the caller's thread); every other manager reads the switch at
   * its next discovery round.
   */
  public PauseResult pause(Principal p, String queue, String shard) {
    return pauses.pause(p, queue, shard);
  }

  /** The opposite of {@link #pause}. */
  public PauseResult resume(Principal p, String queue, String shard) {
    return pauses.resume(p, queue, shard);
  }

  /** The receiver streams on the queue (or every queue with {@code stats}) dispatched here. */
  public List<ReceiverView> listReceivers(Principal p, String queue) {
    return listings.listReceivers(p, queue);
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
    return orderedKeys.listHalted(p, queue, shard, limit);
  }

  /**
   * Skips dead events of an ordered queue (1..{@link #MAX_IDS} ids): each becomes {@code cancelled}
   * (a compare-and-set on its epoch) and, where it halted its key, the key's next event goes.
   * INVALID_ARGUMENT for a queue that is not ordered; an id that is not dead is left unchanged
   * ("not dead").
   */
  public ChangeResult skipDead(Principal p, String queue, String shard, List<Long> ids) {
    return deadChanges.skip(p, queue, shard, ids);
  }

  /** Whether the principal may do {@code a} on the queue: that action or {@code admin}. */
  public static boolean allows(Principal p, String queue, Action a) {
    return Grants.allows(p, queue, a);
  }

  /** The page token of the page after {@code afterId} (for callers that page by id). */
  public static String pageTokenAfter(long afterId) {
    return DeadEventQueries.encodeToken(afterId);
  }
}
