package dev.sluice.core.queue.poll;

import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.dispatch.DispatcherCommand;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Polled;
import dev.sluice.core.queue.dispatch.Inbox;
import dev.sluice.core.queue.dispatch.WindowView;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.PollPosition;
import dev.sluice.db.store.TenantRead;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Poller}'s per-tenant mode: when a backlog deeper than the window hides other tenants'
 * events behind it in the poll index, each tenant is read on its own, up to its part of the window.
 *
 * <p>A round lists the tenants with pending events (one index seek per tenant, at most once a
 * second, a thousand at a time, each listing going on where the last stopped), then tops up the
 * tenants that have room in their part — all of them in one UNION ALL statement, on the (state,
 * tenant, time_next) index. A tenant's part is an equal share of the window (within its cap); when
 * the tenants to read lack room, those holding more than their part give up the excess first.
 *
 * <p>Which tenants a round reads: those with more on disk than their last read took (backlogged),
 * and those whose rows the window let go of. A tenant that is not backlogged has only new rows to
 * come, and the poller's poll of recent rows sees those within milliseconds — unless one of those
 * polls since the last round was skipped (no room) or came back full: then every tenant with room
 * is read. So a round behind one backlog is one short index range, not one per tenant.
 *
 * <p><b>Cursors.</b> Each tenant is read from where its last read ended (its cursor), so a round
 * reads only rows the window does not hold: what a busy tenant used since the last round, a few
 * rows, not its whole part again. That keeps rounds short, and the {@link Poller}'s quick poll of
 * new rows, on the same thread, is not held up behind them. Reading from a cursor is right as long
 * as the window holds every pending row of the tenant before it; the window breaks that only by
 * letting rows go (over the tenant's part when added, trimmed, a retry it had no room for), and the
 * dispatcher reports the earliest such row per tenant ({@link WindowView#drainLetGo}): the cursor
 * moves back to just before it. Until a read from there comes in, the dispatcher turns away that
 * tenant's rows from reads that started past the gap, so that no later row slips in ahead of it and
 * a tenant's events keep their order. The one case nobody reports — a row committed with a {@code
 * time_next} already behind the cursor (a long transaction, an application-set time in the past) —
 * is covered by dropping each cursor every {@link #CURSOR_RESET_NS}: the next read starts from the
 * tenant's oldest row.
 *
 * <p>Owned by the poller thread: no locks.
 */
final class TenantRounds {
  private static final Logger log = LoggerFactory.getLogger(TenantRounds.class);

  /** Full rounds come at most this often; between them the poller reads only recent rows. */
  static final long ROUND_EVERY_NS = TimeUnit.MILLISECONDS.toNanos(20);

  static final long DISCOVER_EVERY_NS = TimeUnit.SECONDS.toNanos(1);
  static final long FORGET_TENANT_NS = TimeUnit.SECONDS.toNanos(10);
  static final int MAX_TENANTS_PER_ROUND = 1000;

  /** Tenants read by one UNION ALL statement. */
  static final int TENANTS_PER_STATEMENT = 50;

  /**
   * The most rows read for one tenant in one round, so that no round is long: at 50 rounds a second
   * this still lets one tenant take 25,000 rows a second.
   */
  static final int MAX_READ = 500;

  /** How long a cursor is trusted before the tenant is read from its oldest row again. */
  static final long CURSOR_RESET_NS = TimeUnit.SECONDS.toNanos(5);

  /**
   * Where a tenant's last read ended (null: none found a row yet, so the next read starts from its
   * oldest), and when it was last read from its oldest row.
   */
  private record Cursor(PollPosition at, long sinceMono) {}

  private final QueueContext ctx;

  /** Where a trim goes: the dispatcher's inbox. */
  private final Inbox dispatcher;

  private final WindowView feed;
  private final Consumer<Polled> handover;
  private final PolledEvents polled;
  private final int windowSize;

  /** Tenants known to have events, with when they were last seen (monotonic ns). */
  private final Map<String, Long> knownTenants = new TreeMap<>();

  /** Tenants whose last read came back full: more of theirs waits on disk. */
  private final Set<String> backlogged = new HashSet<>();

  private final Map<String, Cursor> cursors = new HashMap<>();

  /** Every poll of recent rows since the last round ran and came back short: it saw every row. */
  private boolean recentComplete;

  private long lastDiscovery = Long.MIN_VALUE / 2;

  /**
   * Where the listing of tenants stands: the last tenant of the last (full) page, or null to start
   * from the first. Each listing reads the next {@link #MAX_TENANTS_PER_ROUND} tenants, so with T
   * tenants every one is known within ceil(T / 1000) listings (seconds), and stays known for {@link
   * #FORGET_TENANT_NS} after.
   */
  private String listedUpTo;

  private long lastRound = Long.MIN_VALUE / 2;

  public TenantRounds(
      QueueContext ctx,
      WindowView feed,
      Inbox dispatcher,
      PolledEvents polled,
      Consumer<Polled> handover) {
    this.ctx = ctx;
    this.polled = polled;
    this.dispatcher = dispatcher;
    this.feed = feed;
    this.handover = handover;
    this.windowSize = ctx.options().cacheSize();
  }

  /** Makes the next pass run a round, however recent the last one (tests drive passes so). */
  public void roundDueNow() {
    lastRound = Long.MIN_VALUE / 2;
  }

  /** Makes the next chance to list the tenants do so (tests drive listings so). */
  public void discoveryDueNow() {
    lastDiscovery = Long.MIN_VALUE / 2;
  }

  /** Whether a full round is due (else the poller reads only recent rows). */
  public boolean roundDue(long mono) {
    return mono - lastRound >= ROUND_EVERY_NS;
  }

  /**
   * In the single poll's mode, at most once a second: lists the tenants with pending events and
   * says whether the window lacks some of them (then per-tenant rounds are needed).
   */
  public boolean tenantsWaitOnDisk(long mono) {
    if (mono - lastDiscovery < DISCOVER_EVERY_NS) {
      return false;
    }
    discover(mono);
    return knownTenants.size() > feed.heldTenants().size();
  }

  public int knownTenants() {
    return knownTenants.size();
  }

  /**
   * The poller's poll of recent rows ran ({@code complete}: it read every row in its range) and
   * read {@code rows}: their tenants are known from now on, like those the window holds at a round.
   * A quiet tenant whose event came in and went out between two rounds would otherwise stay unknown
   * until the next listing, and its next event, if the recent poll cannot reach it, would wait for
   * that listing too.
   */
  public void recentPolled(boolean complete, List<EventRow> rows, long mono) {
    recentComplete &= complete;
    for (EventRow r : rows) {
      knownTenants.put(r.tenant(), mono);
    }
  }

  /** Whether {@code tenant} is among the tenants the rounds read. */
  public boolean knows(String tenant) {
    return knownTenants.containsKey(tenant);
  }

  /** Back to the single poll: cursors are not kept up meanwhile, so they are dropped. */
  public void leave() {
    cursors.clear();
    feed.drainLetGo();
  }

  /**
   * One round: tops up each known tenant that has room in its part.
   *
   * @param dueBeforeNs read rows due by then (now plus the look-ahead)
   * @return whether some tenant is still at its part or has more on disk than it was read
   */
  public boolean round(long mono, long dueBeforeNs) {
    lastRound = mono;
    if (mono - lastDiscovery >= DISCOVER_EVERY_NS) {
      discover(mono);
    }
    // Tenants seen in the window recently stay known between listings: a quiet tenant rarely has
    // rows pending at the instant of a listing, yet its next event must be read within a round.
    for (String t : feed.heldTenants()) {
      knownTenants.put(t, mono);
    }
    knownTenants.values().removeIf(seen -> mono - seen > FORGET_TENANT_NS);
    backlogged.retainAll(knownTenants.keySet());
    cursors.keySet().retainAll(knownTenants.keySet());
    Set<String> rewound = rewind();
    boolean readAll = !recentComplete;
    recentComplete = true;

    int equal = equalShare();
    boolean pressed = false;
    Map<String, Integer> room = new LinkedHashMap<>();
    for (String t : knownTenants.keySet()) {
      int free = part(t, equal) - feed.held(t);
      if (free <= 0) {
        pressed = true;
        backlogged.add(t); // until a read shows otherwise
      } else if (readAll || backlogged.contains(t) || rewound.contains(t) || stale(t, mono)) {
        room.put(t, free);
      }
    }
    // The window's room, split evenly: rows beyond it would be dropped, and those dropped would
    // always be the same tenants' (the last ones read).
    int windowRoom = feed.cacheRoom() + trimForTenantsOnDisk(room, equal);
    if (windowRoom <= 0) {
      // A full window and no tenant above its part: nothing can come in this round.
      for (String t : room.keySet()) {
        pressed |= backlogged.contains(t);
      }
      return pressed;
    }
    List<TenantRead> reads = new ArrayList<>(room.size());
    int each = Math.max(1, windowRoom / Math.max(1, room.size()));
    for (Map.Entry<String, Integer> e : room.entrySet()) {
      String t = e.getKey();
      int n = Math.min(MAX_READ, Math.min(each, e.getValue()));
      Cursor c = cursors.get(t);
      if (stale(t, mono) || c.at() == null) {
        // From the oldest row: the window's own rows of the tenant come first; read past them.
        reads.add(new TenantRead(t, feed.held(t) + n, null));
      } else {
        reads.add(new TenantRead(t, n, c.at()));
      }
    }
    for (int from = 0; from < reads.size(); from += TENANTS_PER_STATEMENT) {
      pressed |=
          read(
              reads.subList(from, Math.min(reads.size(), from + TENANTS_PER_STATEMENT)),
              dueBeforeNs,
              equal,
              mono);
    }
    return pressed;
  }

  /** One statement's reads; returns whether a tenant came back full (more on disk). */
  private boolean read(List<TenantRead> reads, long dueBeforeNs, int equal, long mono) {
    long seq = feed.settledSeq();
    long t0 = ctx.clock().monoNs();
    List<EventRow> rows = ctx.dispatch().pollTenants(reads, dueBeforeNs);
    ctx.metrics().pollDuration.record(ctx.clock().monoNs() - t0, TimeUnit.NANOSECONDS);
    Map<String, Integer> count = new HashMap<>();
    Map<String, PollPosition> last = new HashMap<>();
    for (EventRow r : rows) {
      count.merge(r.tenant(), 1, Integer::sum);
      last.merge(r.tenant(), PollPosition.of(r), (a, b) -> a.compareTo(b) >= 0 ? a : b);
    }
    boolean full = false;
    Map<String, PollPosition> starts = new HashMap<>();
    for (TenantRead read : reads) {
      starts.put(read.tenant(), read.after() == null ? PollPosition.FIRST : read.after());
      String t = read.tenant();
      if (count.getOrDefault(t, 0) >= read.limit()) {
        backlogged.add(t);
        full = true;
      } else {
        backlogged.remove(t);
      }
      PollPosition end = last.get(t);
      if (read.after() == null) {
        cursors.put(t, new Cursor(end, mono));
      } else if (end != null) {
        cursors.put(t, new Cursor(end, cursors.get(t).sinceMono()));
      }
    }
    if (!rows.isEmpty()) {
      handover.accept(Polled.tenants(polled.of(rows), seq, equal, starts));
    }
    return full;
  }

  /** Whether {@code tenant} has no cursor to trust: its next read starts from its oldest row. */
  private boolean stale(String tenant, long mono) {
    Cursor c = cursors.get(tenant);
    return c == null || mono - c.sinceMono() >= CURSOR_RESET_NS;
  }

  /**
   * Cursors move back to just before the rows the window let go of since the last round; returns
   * the tenants concerned (they are read this round).
   */
  private Set<String> rewind() {
    Map<String, PollPosition> letGo = feed.drainLetGo();
    letGo.forEach(
        (t, before) ->
            cursors.computeIfPresent(
                t,
                (k, c) ->
                    c.at() == null
                        ? c
                        : new Cursor(PollPosition.earlier(c.at(), before), c.sinceMono())));
    return letGo.keySet();
  }

  /**
   * When the tenants to read need more room than the window has, the tenants holding more than
   * their part give up the excess (their last events in poll order), so that a window filled by one
   * or two backlogs before the others were known does not keep the rest to a trickle. Returns the
   * room that makes (the dispatcher trims before it takes this round's rows: its inbox is FIFO).
   */
  private int trimForTenantsOnDisk(Map<String, Integer> room, int equal) {
    int need = 0;
    for (int free : room.values()) {
      need += free;
    }
    if (need <= feed.cacheRoom()) {
      return 0;
    }
    Map<String, Integer> keep = new HashMap<>();
    int freed = 0;
    for (String t : knownTenants.keySet()) {
      int share = part(t, equal);
      int held = feed.held(t);
      if (held > share) {
        keep.put(t, share);
        freed += held - share;
      }
    }
    if (!keep.isEmpty()) {
      dispatcher.post(new DispatcherCommand.Trim(keep));
      log.debug("{}: trimming the window to each tenant's part: {}", ctx.where(), keep);
    }
    return freed;
  }

  /**
   * An equal part of the window for every known tenant: in per-tenant rounds a tenant reads at most
   * this, and never above its own cap — so a backlog of ten tenants puts all ten in the window.
   */
  public int equalShare() {
    int n = Math.max(1, knownTenants.size());
    return Math.max(1, windowSize / n);
  }

  /** A tenant's part of the window: the equal share, within its own cap. */
  private int part(String tenant, int equal) {
    return Math.max(1, Math.min(feed.tenantCap(tenant), equal));
  }

  /**
   * Lists the tenants with pending events: one statement, one index seek per tenant (a round trip
   * each would hold up the poll of new rows behind them, once a second).
   */
  private void discover(long mono) {
    lastDiscovery = mono;
    var page = ctx.dispatch().pendingTenantsAfter(listedUpTo, MAX_TENANTS_PER_ROUND);
    for (var td : page) {
      knownTenants.put(td.tenant(), mono);
    }
    // A full page: the next listing goes on after its last tenant; a short one: back to the first.
    listedUpTo = page.size() >= MAX_TENANTS_PER_ROUND ? page.get(page.size() - 1).tenant() : null;
  }
}
