package dev.sluice.manager.queue;

import dev.sluice.db.store.EventRow;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads pending events into the window, on its own thread ({@code sluice-<shard>-<queue>-poller}).
 *
 * <p>Each round: re-measure the database clock (at most once a second), then — if the window has
 * room — read the oldest pending events due within the look-ahead (the index on (state, time_next)
 * serves it), and hand them to the dispatcher. It polls at least every {@code poll_interval}, and
 * at once when the dispatcher says the window drained while the last poll came back full. The
 * {@link RetryCollector} runs on this thread too.
 *
 * <p>Fairness: each tenant may hold only its share of the window. When the last poll over all
 * tenants brought rows a full tenant could not take, a backlog may be hiding other tenants' events
 * behind it in the poll index, so the poller switches to per-tenant rounds: it lists the tenants
 * with pending events (one index seek per tenant, at most once a second) and reads each tenant that
 * has room up to its share, on the (state, tenant, time_next) index — all such tenants in one UNION
 * ALL statement, every 20 ms at most. A tenant's share is then an equal part of the window (within
 * its cap); when the tenants to read lack room, those holding more than their part give up the
 * excess first. Between those rounds it reads only the rows that came due in the last second, a
 * short range of the poll index in front of the backlog, so a quiet tenant's new event is seen
 * within milliseconds (and no tenant is filled beyond its part by it). It returns to the single
 * poll once no tenant is at its share and none has more on disk than it last read.
 *
 * <p>Pace: a poll that found rows is followed after {@link #BUSY_WAIT_NS}; after the last rows the
 * pause grows with the quiet time, up to {@code poll_interval}.
 *
 * <p>Errors (database down, say) are logged, counted, and retried with growing pauses; the loop
 * never dies.
 */
final class Poller implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Poller.class);
  private static final long SYNC_EVERY_NS = TimeUnit.SECONDS.toNanos(1);

  private final QueueContext ctx;
  private final Dispatcher dispatcher;
  private final RetryCollector collector;
  private final Waiter waiter = new Waiter();
  private final long intervalNs;

  /** The longest look-ahead: twice poll_interval. */
  private final long lookaheadNs;

  /** Slack on top of twice the pause, for the poll itself and the dispatcher's turn. */
  static final long LOOKAHEAD_MARGIN_NS = TimeUnit.MILLISECONDS.toNanos(10);

  private final int limit;
  private volatile boolean running = true;
  private long lastSync = Long.MIN_VALUE / 2;

  /**
   * Where the current sweep of the poll index stands: the (time_next, id) of the last row read, or
   * null at the start of a sweep. Continuing from it reads each pending row about once per sweep
   * instead of re-reading the rows already in the window; a sweep restarts at least every {@link
   * #SWEEP_EVERY_NS} so that rows committed late with an older time_next are found.
   */
  private long[] cursor;

  private long sweepStartedMono;
  private static final long SWEEP_EVERY_NS = TimeUnit.SECONDS.toNanos(1);
  private long lastCollect = Long.MIN_VALUE / 2;
  private int failures;

  /** How long to wait before the next round; see {@link #pollOnce}. */
  private long nextWaitNs;

  private boolean foundRows;
  private boolean lastGlobalFull;

  /** The pause between polls while rows keep coming. */
  static final long BUSY_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(2);

  /** When a poll last found rows (monotonic ns). */
  private long lastFoundMono = Long.MIN_VALUE / 2;

  private final boolean fair;
  private boolean tenantMode;

  /** Tenants known to have events, with when they were last seen (monotonic ns). */
  private final java.util.Map<String, Long> knownTenants = new java.util.TreeMap<>();

  private static final long FORGET_TENANT_NS = TimeUnit.SECONDS.toNanos(10);
  private long lastDiscovery = Long.MIN_VALUE / 2;
  private static final long DISCOVER_EVERY_NS = TimeUnit.SECONDS.toNanos(1);
  static final int MAX_TENANTS_PER_ROUND = 1000;

  /**
   * In per-tenant mode, full rounds come at most this often; between them a cheap poll reads only
   * the rows that became due lately ({@link #recentPoll}).
   */
  static final long TENANT_ROUND_EVERY_NS = TimeUnit.MILLISECONDS.toNanos(20);

  /** How far back {@link #recentPoll} looks: rows due before that are the backlog's. */
  static final long RECENT_NS = TimeUnit.SECONDS.toNanos(1);

  private long lastTenantRound = Long.MIN_VALUE / 2;

  /** Tenants whose last per-tenant read came back full: more of theirs waits on disk. */
  private final java.util.Set<String> backlogged = new java.util.HashSet<>();

  /** Tenants read by one UNION ALL statement in a per-tenant round. */
  static final int TENANTS_PER_STATEMENT = 50;

  Poller(QueueContext ctx, Dispatcher dispatcher, RetryCollector collector) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
    this.collector = collector;
    this.intervalNs = ctx.options().pollInterval().toNanos();
    this.lookaheadNs = 2 * intervalNs;
    this.limit = ctx.options().cacheSize();
    this.fair = ctx.options().fair();
    this.nextWaitNs = intervalNs;
  }

  boolean tenantMode() {
    return tenantMode;
  }

  void wake() {
    waiter.wake();
  }

  void stop() {
    running = false;
    waiter.wake();
  }

  @Override
  public void run() {
    while (running) {
      try {
        pollOnce();
        failures = 0;
        waiter.await(nextWaitNs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        failures++;
        ctx.metrics().dbErrors.increment();
        long pauseMs = Math.min(5_000, 100L << Math.min(failures, 6));
        log.warn(
            "{}: poll failed ({} in a row), retrying in {} ms: {}",
            ctx.where(),
            failures,
            pauseMs,
            e.toString());
        try {
          waiter.await(TimeUnit.MILLISECONDS.toNanos(pauseMs));
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** One page of the sweep over all tenants. */
  private void globalPoll(long mono) {
    if (cursor != null && mono - sweepStartedMono >= SWEEP_EVERY_NS) {
      cursor = null;
    }
    long due = ctx.clock().nowNs() + lookahead();
    long seq = dispatcher.settledSeq();
    long t0 = System.nanoTime();
    int lim;
    List<EventRow> rows;
    boolean continued = cursor != null;
    if (!continued) {
      sweepStartedMono = mono;
      lim = limit; // the window's own rows come first in poll order: read past them
      rows = ctx.store().pollPending(due, lim);
    } else {
      lim = Math.max(1, dispatcher.cacheRoom());
      rows = ctx.store().pollPendingAfter(due, cursor[0], cursor[1], lim);
    }
    ctx.metrics().pollDuration.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
    boolean full = rows.size() >= lim;
    lastGlobalFull = full;
    if (full) {
      EventRow last = rows.get(rows.size() - 1);
      cursor = new long[] {last.timeNextNs(), last.id()};
    } else {
      cursor = null;
    }
    if (!rows.isEmpty()) {
      handOver(rows, seq, full, true, Integer.MAX_VALUE);
      // A page after a full one is the backlog: read on at once. Otherwise whether the rows were
      // news is for the dispatcher to say (see pollOnce).
      foundRows |= continued;
    }
  }

  /**
   * In per-tenant mode: at most every {@link #TENANT_ROUND_EVERY_NS}, reads each known tenant that
   * has room in its share of the window (one statement for all); between such rounds, only the
   * recently due rows ({@link #recentPoll}).
   */
  private void tenantRound(long mono) {
    if (mono - lastTenantRound < TENANT_ROUND_EVERY_NS) {
      recentPoll();
      return;
    }
    lastTenantRound = mono;
    if (mono - lastDiscovery >= DISCOVER_EVERY_NS) {
      discoverTenants(mono);
    }
    // Tenants seen in the window recently stay known between listings: a quiet tenant rarely has
    // rows pending at the instant of a listing, yet its next event must be read within a round.
    for (String t : dispatcher.heldTenants()) {
      knownTenants.put(t, mono);
    }
    knownTenants.values().removeIf(seen -> mono - seen > FORGET_TENANT_NS);
    backlogged.retainAll(knownTenants.keySet());
    int equal = equalShare();
    long due = ctx.clock().nowNs() + lookahead();
    boolean pressed = false;
    java.util.Map<String, Integer> toRead = new java.util.LinkedHashMap<>();
    java.util.Map<String, Integer> heldBefore = new java.util.HashMap<>();
    for (String t : knownTenants.keySet()) {
      int share = part(t, equal);
      int held = dispatcher.held(t);
      if (held >= share) {
        pressed = true;
        backlogged.add(t); // until a read shows otherwise
        continue;
      }
      if (held > share / 2) {
        // Still well stocked; if its last read was full, more waits on disk all the same.
        pressed |= backlogged.contains(t);
        continue;
      }
      toRead.put(t, share);
      heldBefore.put(t, held);
    }
    // The window's room, split evenly: rows beyond it would be dropped, and those dropped would
    // always be the same tenants' (the last ones read).
    int room = dispatcher.cacheRoom() + trimForTenantsOnDisk(toRead, equal);
    if (room <= 0) {
      // A full window and no tenant above its part: nothing can come in this round.
      for (String t : toRead.keySet()) {
        pressed |= backlogged.contains(t);
      }
      toRead.clear();
    }
    if (!toRead.isEmpty()) {
      int each = Math.max(1, room / toRead.size());
      toRead.replaceAll((t, share) -> Math.min(share, heldBefore.get(t) + each));
    }
    // All tenants that need rows in one statement (a UNION ALL, TENANTS_PER_STATEMENT at most).
    List<String> names = new java.util.ArrayList<>(toRead.keySet());
    for (int from = 0; from < names.size(); from += TENANTS_PER_STATEMENT) {
      java.util.Map<String, Integer> part = new java.util.LinkedHashMap<>();
      for (String t : names.subList(from, Math.min(names.size(), from + TENANTS_PER_STATEMENT))) {
        part.put(t, toRead.get(t));
      }
      long seq = dispatcher.settledSeq();
      long t0 = System.nanoTime();
      List<EventRow> rows = ctx.store().pollTenants(part, due);
      ctx.metrics().pollDuration.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
      java.util.Map<String, Integer> read = new java.util.HashMap<>();
      for (EventRow r : rows) {
        read.merge(r.tenant(), 1, Integer::sum);
      }
      for (String t : part.keySet()) {
        int n = read.getOrDefault(t, 0);
        if (n >= part.get(t)) {
          backlogged.add(t);
          pressed = true;
        } else {
          backlogged.remove(t);
        }
      }
      if (!rows.isEmpty()) {
        handOver(rows, seq, false, false, equal);
      }
    }
    if (!pressed) {
      tenantMode = false;
      log.info("{}: no tenant at its share any more; back to one poll for all", ctx.where());
    }
  }

  /**
   * When the tenants to read need more room than the window has, the tenants holding more than
   * their part give up the excess (their last events in poll order), so that a window filled by one
   * or two backlogs before the others were known does not keep the rest to a trickle. Returns the
   * room that makes (the dispatcher trims before it takes this round's rows: its inbox is FIFO).
   */
  private int trimForTenantsOnDisk(java.util.Map<String, Integer> toRead, int equal) {
    int need = 0;
    for (var e : toRead.entrySet()) {
      need += Math.max(0, e.getValue() - dispatcher.held(e.getKey()));
    }
    if (need <= dispatcher.cacheRoom()) {
      return 0;
    }
    java.util.Map<String, Integer> keep = new java.util.HashMap<>();
    int freed = 0;
    for (String t : knownTenants.keySet()) {
      int share = part(t, equal);
      int held = dispatcher.held(t);
      if (held > share) {
        keep.put(t, share);
        freed += held - share;
      }
    }
    if (!keep.isEmpty()) {
      dispatcher.post(() -> dispatcher.onTrim(keep));
      log.debug("{}: trimming the window to each tenant's part: {}", ctx.where(), keep);
    }
    return freed;
  }

  /**
   * Between per-tenant rounds: the rows that became due within the last second (new inserts,
   * delayed events coming due, retries), on the poll index — a short range however deep the backlog
   * behind it, so a quiet tenant's new event is seen in milliseconds. Rows a tenant's share cannot
   * take are dropped by the window as usual.
   */
  private void recentPoll() {
    int room = dispatcher.cacheRoom();
    if (room <= 0) {
      return;
    }
    long now = ctx.clock().nowNs();
    long seq = dispatcher.settledSeq();
    long t0 = System.nanoTime();
    List<EventRow> rows =
        ctx.store()
            .pollPendingAfter(
                now + lookahead(), now - RECENT_NS, Long.MAX_VALUE, Math.min(room, 1000));
    ctx.metrics().pollDuration.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
    if (!rows.isEmpty()) {
      handOver(rows, seq, false, false, equalShare());
    }
  }

  /**
   * An equal part of the window for every known tenant: in per-tenant rounds a tenant reads at most
   * this, and never above its own cap — so a backlog of ten tenants puts all ten in the window.
   */
  private int equalShare() {
    int n = Math.max(1, knownTenants.size());
    return Math.max(1, limit / n);
  }

  /**
   * Gives polled rows to the dispatcher, made into window events here, off its thread; in
   * per-tenant mode no tenant is filled beyond {@code part}.
   */
  private void handOver(List<EventRow> rows, long seq, boolean full, boolean global, int part) {
    List<CachedEvent> events = PolledEvents.of(rows, ctx);
    dispatcher.post(() -> dispatcher.onPolled(events, seq, full, global, part));
  }

  /** A tenant's part of the window in per-tenant rounds: the equal share, within its own cap. */
  private int part(String tenant, int equal) {
    return Math.max(1, Math.min(dispatcher.tenantCap(tenant), equal));
  }

  /** Lists the tenants with pending events: one index seek each. */
  private void discoverTenants(long mono) {
    lastDiscovery = mono;
    String after = null;
    for (int i = 0; i < MAX_TENANTS_PER_ROUND; i++) {
      var td = ctx.store().nextTenant(after);
      if (td == null) {
        break;
      }
      knownTenants.put(td.tenant(), mono);
      after = td.tenant();
    }
  }

  /**
   * How far ahead of now a poll reads: twice the current pause between polls (plus a margin), so
   * that an event is in the window before it is due even if the next poll comes a little later —
   * and no further, so that polling every few milliseconds does not re-read a long stretch of
   * delayed events each time. Never above twice {@code poll_interval}.
   */
  private long lookahead() {
    return Math.min(lookaheadNs, 2 * nextWaitNs + LOOKAHEAD_MARGIN_NS);
  }

  /** One round; package-visible so tests can drive it. */
  void pollOnce() {
    foundRows = false;
    pollRound();
    // Adaptive: while due rows keep coming the next poll follows at once (BUSY_WAIT); after the
    // last
    // ones the pause grows with the quiet time — a quarter of it — up to poll_interval. An event
    // after a quiet gap waits at most about a quarter of that gap, polls during a gap grow only
    // with its logarithm, and an idle queue costs its few queries a second.
    long mono = System.nanoTime();
    if (foundRows) {
      lastFoundMono = mono;
    }
    // The dispatcher took rows that were already due and new to it (from this poll or the one
    // before): inserts are arriving. Rows read ahead of their time do not count: they are in the
    // window in time anyway, and re-reading the look-ahead every few ms would only cost.
    lastFoundMono = Math.max(lastFoundMono, dispatcher.lastDueNewsMono());
    nextWaitNs = Math.min(intervalNs, Math.max(BUSY_WAIT_NS, (mono - lastFoundMono) / 4));
  }

  private void pollRound() {
    long mono = System.nanoTime();
    if (mono - lastSync >= SYNC_EVERY_NS || !ctx.clock().synced()) {
      ctx.clock().sync(ctx.store()::serverTimeNs);
      lastSync = mono;
    }
    if (fair
        && !tenantMode
        && !dispatcher.lastPollCapped()
        && lastGlobalFull
        && mono - lastDiscovery >= DISCOVER_EVERY_NS) {
      // A backlog deeper than the window: are tenants waiting on disk that the window lacks?
      discoverTenants(mono);
      if (knownTenants.size() > dispatcher.heldTenants().size()) {
        tenantMode = true;
        log.info(
            "{}: {} tenants have pending events, the window holds {}; polling tenant by tenant",
            ctx.where(),
            knownTenants.size(),
            dispatcher.heldTenants().size());
      }
    }
    if (fair && !tenantMode && dispatcher.lastPollCapped()) {
      tenantMode = true;
      log.info(
          "{}: a tenant holds its full share of the window; polling tenant by tenant", ctx.where());
    }
    if (tenantMode) {
      tenantRound(mono);
    } else if (dispatcher.cacheRoom() > 0) {
      globalPoll(mono);
    }
    if (mono - lastCollect >= collector.intervalNs()) {
      collector.scan();
      lastCollect = mono;
    }
  }
}
