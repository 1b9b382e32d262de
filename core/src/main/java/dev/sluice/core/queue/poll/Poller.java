package dev.sluice.core.queue.poll;

import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.loop.LoopRunner;
import dev.sluice.core.loop.Waiter;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Polled;
import dev.sluice.core.queue.dispatch.Inbox;
import dev.sluice.core.queue.dispatch.WindowView;
import dev.sluice.core.queue.ordering.KeyTurns;
import dev.sluice.db.store.EventRow;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
 * tenants brought rows a full tenant could not take, or the tenants with pending events outnumber
 * those in the window, a backlog may be hiding other tenants' events behind it in the poll index,
 * so the poller switches to per-tenant rounds ({@link TenantRounds}), every 20 ms at most. Every
 * pass in that mode (one with a round too, after it) reads the rows that came due in the last
 * second, a short range of the poll index in front of the backlog, so a quiet tenant's new event is
 * seen within milliseconds (and no tenant is filled beyond its part by it): it never waits for a
 * round and then a pause as well. It returns to the single poll once no tenant is at its part and
 * none has more on disk than it was last read, and the switch has lasted its hold ({@link
 * PollMode}: at least a second, more when the backlog keeps bringing it back).
 *
 * <p>Pace: while rows keep coming a pass starts {@link #BUSY_WAIT_NS} after the last one started
 * (or {@link #MIN_WAIT_NS} after it ended, if it took longer); after the last rows the pause grows
 * with the quiet time, up to {@code poll_interval}.
 *
 * <p>While the shard's binlog is followed ({@link RowNews}), inserts wake the poller instead of
 * being polled for: between rows it rests — until the next row it heard of comes due, or for the
 * safety poll ({@link #SAFETY_POLL_NS}, or {@code poll_interval} if longer), which finds whatever
 * the binlog did not tell. It reads {@code 2 × poll_interval} ahead then, so a woken read always
 * covers the row that woke it. In per-tenant rounds (a backlog) it keeps the polling pace.
 *
 * <p>Errors (database down, say) are logged, counted, and retried with growing pauses; the loop
 * never dies.
 */
public final class Poller implements Runnable {
  private static final long SYNC_EVERY_NS = TimeUnit.SECONDS.toNanos(1);

  private final QueueContext ctx;
  private final PolledEvents polled;

  /** Where the polls go: the dispatcher's inbox. */
  private final Inbox dispatcher;

  /** The window as this thread may see it (published figures) and feed it. */
  private final WindowView feed;

  private final RetryCollector collector;

  /** This loop's sleep, which the dispatcher ends when the window drained after a full poll. */
  private final Waiter waiter;

  /** poll_interval; written by {@link #setInterval} when the comment changes it in place. */
  private volatile long intervalNs;

  /** The longest look-ahead: twice poll_interval. */
  private volatile long lookaheadNs;

  /** Slack on top of twice the pause, for the poll itself and the dispatcher's turn. */
  static final long LOOKAHEAD_MARGIN_NS = TimeUnit.MILLISECONDS.toNanos(10);

  private final int limit;
  private volatile boolean running = true;

  /** What the binlog follower says of new rows; whether it follows them now. */
  private final RowNews news;

  /** Whether this pass runs with the binlog followed (read once per pass). */
  private boolean following;

  /**
   * The longest rest while the binlog is followed: the safety poll that finds rows the binlog did
   * not tell of (a follower's gap, a write that skipped the binlog) and scans for orphaned fires.
   */
  static final long SAFETY_POLL_NS = TimeUnit.SECONDS.toNanos(5);

  /** The pause before reading again for a told row the last read did not find. */
  static final long UNREAD_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(1);

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

  /** How long to wait before the next round; see {@link #pollOnce}. */
  private long nextWaitNs;

  private boolean foundRows;
  private boolean lastGlobalFull;

  /** The pause between polls while rows keep coming. */
  static final long BUSY_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(2);

  /** The shortest pause between two passes, however long the last one took. */
  static final long MIN_WAIT_NS = TimeUnit.MICROSECONDS.toNanos(250);

  /** When a poll last found rows (monotonic ns). */
  private long lastFoundMono = Long.MIN_VALUE / 2;

  private final boolean fair;
  private final PollMode mode;
  private final TenantRounds rounds;

  /** How far back {@link #recentPoll} looks: rows due before that are the backlog's. */
  static final long RECENT_NS = TimeUnit.SECONDS.toNanos(1);

  private long lastRecentMono = Long.MIN_VALUE / 2;

  /**
   * While the binlog is followed: the (time_next, id) of the last row the recent poll read, where
   * its next read continues; null to start from a second ago.
   */
  private long[] recentCursor;

  /** Whether the last recent read came back full: the next one reads on, told or not. */
  private boolean recentMore;

  /** An ordered queue's holds and turns (a no-op for an unordered queue's rows). */
  private final KeyTurns turns;

  public Poller(
      QueueContext ctx,
      WindowView feed,
      Inbox dispatcher,
      Waiter waiter,
      RetryCollector collector) {
    this(ctx, feed, dispatcher, waiter, collector, new KeyTurns(ctx, waiter), new RowNews(waiter));
  }

  public Poller(
      QueueContext ctx,
      WindowView feed,
      Inbox dispatcher,
      Waiter waiter,
      RetryCollector collector,
      KeyTurns turns,
      RowNews news) {
    this.turns = turns;
    this.news = news;
    this.ctx = ctx;
    this.dispatcher = dispatcher;
    this.feed = feed;
    this.waiter = waiter;
    this.collector = collector;
    this.intervalNs = ctx.options().pollInterval().toNanos();
    this.lookaheadNs = 2 * intervalNs;
    this.limit = ctx.options().cacheSize();
    this.fair = ctx.options().fair();
    this.nextWaitNs = intervalNs;
    this.polled = new PolledEvents(ctx, feed::sawRows, turns);
    // An ordered queue's sweeps read the window's own rows again: their keys are not read again.
    ctx.dispatch().knownHeads(feed::holdsOrdered);
    this.rounds = new TenantRounds(ctx, feed, dispatcher, polled, this::handOver);
    this.mode = new PollMode(ctx.where(), ctx.metrics().pollModeSwitches);
  }

  /** A new poll_interval, from any thread: the next pause uses it. */
  public void setInterval(java.time.Duration interval) {
    long ns = interval.toNanos();
    this.lookaheadNs = 2 * ns;
    this.intervalNs = ns;
    waiter.wake();
  }

  boolean tenantMode() {
    return mode.perTenant();
  }

  /** The poll's mode and its hysteresis (for tests). */
  PollMode mode() {
    return mode;
  }

  /** The per-tenant rounds (for tests). */
  TenantRounds rounds() {
    return rounds;
  }

  public void stop() {
    running = false;
    waiter.wake();
  }

  @Override
  public void run() {
    new LoopRunner(ctx.faults(), FaultHook.POLLER).run(() -> running, this::pass);
  }

  private void pass() throws InterruptedException {
    FaultHook.check(FaultHook.POLLER, ctx.queue());
    long started = ctx.clock().monoNs();
    try {
      pollOnce();
    } catch (RuntimeException e) {
      ctx.metrics().dbErrors.increment();
      throw e;
    }
    // The pace runs from the start of one pass to the start of the next: a slow pass (a
    // per-tenant round, a busy database) is not followed by a full pause as well.
    long pause = Math.max(MIN_WAIT_NS, nextWaitNs - (ctx.clock().monoNs() - started));
    waiter.await(pause);
  }

  /** One page of the sweep over all tenants. */
  private void globalPoll(long mono) {
    if (cursor != null && sweepOver(mono)) {
      cursor = null;
    }
    long due = ctx.clock().nowNs() + lookahead();
    long seq = feed.settledSeq();
    long t0 = ctx.clock().monoNs();
    int lim;
    List<EventRow> rows;
    boolean continued = cursor != null;
    if (!continued) {
      sweepStartedMono = mono;
      news.sweepStarted();
      // The window's own rows come first in poll order: read past them (as far as its free bytes
      // allow: cacheRoom is sized by them).
      lim = Math.max(1, Math.min(limit, feed.cachedCount() + feed.cacheRoom()));
      rows = ctx.dispatch().pollPending(due, lim);
    } else {
      lim = Math.max(1, feed.cacheRoom());
      rows = ctx.dispatch().pollPendingAfter(due, cursor[0], cursor[1], lim);
    }
    ctx.metrics().pollDuration.record(ctx.clock().monoNs() - t0, TimeUnit.NANOSECONDS);
    news.read(rows);
    boolean full = rows.size() >= lim;
    lastGlobalFull = full;
    if (full) {
      EventRow last = rows.get(rows.size() - 1);
      cursor = new long[] {last.timeNextNs(), last.id()};
    } else {
      cursor = null;
    }
    if (!rows.isEmpty()) {
      handOver(Polled.sweep(polled.of(rows), seq, full));
      // A page after a full one is the backlog: read on at once. Otherwise whether the rows were
      // news is for the dispatcher to say (see pollOnce).
      foundRows |= continued;
    }
  }

  /**
   * Whether the sweep starts again from the front of the poll index. Polling alone: every second,
   * since a row committed late with an older time_next lies behind the cursor. With the binlog
   * followed, only when it told of a pending row behind the cursor (or at the safety poll's pace):
   * a drain then reads each row about once instead of re-reading the window's rows every second.
   */
  private boolean sweepOver(long mono) {
    long age = mono - sweepStartedMono;
    if (!following) {
      return age >= SWEEP_EVERY_NS;
    }
    return age >= SAFETY_POLL_NS || news.toldBefore(cursor[0]);
  }

  /**
   * Between per-tenant rounds: the rows that became due within the last second (new inserts,
   * delayed events coming due, retries), on the poll index — a short range however deep the backlog
   * behind it, so a quiet tenant's new event is seen in milliseconds. Rows a tenant's share cannot
   * take are dropped by the window as usual.
   */
  private void recentPoll() {
    int room = feed.cacheRoom();
    long t0 = ctx.clock().monoNs();
    // Polls less than half the range apart overlap: together they saw every row in it.
    boolean covered = t0 - lastRecentMono < RECENT_NS / 2;
    if (room <= 0) {
      rounds.recentPolled(false, List.of(), t0);
      return;
    }
    long now = ctx.clock().nowNs();
    long seq = feed.settledSeq();
    int lim = Math.min(room, 1000);
    long fromNs = now - RECENT_NS;
    long fromId = Long.MAX_VALUE;
    if (following && recentCursor != null && recentCursor[0] >= fromNs) {
      // Followed: what was read last time is not read again, and with no row told since, there is
      // nothing new to read; a row told behind the cursor (committed late) makes the read start
      // from a second ago again.
      long told = news.takeToldRecent();
      if (told == Long.MAX_VALUE && !recentMore) {
        rounds.recentPolled(covered, List.of(), t0);
        lastRecentMono = t0;
        return;
      }
      if (told > recentCursor[0]) {
        fromNs = recentCursor[0];
        fromId = recentCursor[1];
      }
    } else {
      news.takeToldRecent();
    }
    List<EventRow> rows = ctx.dispatch().pollPendingAfter(now + lookahead(), fromNs, fromId, lim);
    ctx.metrics().pollDuration.record(ctx.clock().monoNs() - t0, TimeUnit.NANOSECONDS);
    news.read(rows);
    recentMore = rows.size() >= lim;
    if (!rows.isEmpty()) {
      EventRow last = rows.get(rows.size() - 1);
      recentCursor = new long[] {last.timeNextNs(), last.id()};
    }
    lastRecentMono = t0;
    rounds.recentPolled(covered && rows.size() < lim, rows, t0);
    if (!rows.isEmpty()) {
      handOver(Polled.recent(polled.of(rows), seq, rounds.equalShare()));
    }
  }

  /**
   * An ordered queue's keys whose events the dispatcher let go of: their next events, released and
   * due soon, go straight to the window (without waiting for a poll to reach them).
   */
  private void keyTurns() {
    long seq = feed.settledSeq();
    List<EventRow> next = turns.pass(ctx.clock().nowNs() + lookahead());
    if (!next.isEmpty()) {
      handOver(Polled.recent(polled.of(next), seq, Integer.MAX_VALUE));
    }
  }

  /** Gives a poll's events to the dispatcher (made into window events here, off its thread). */
  private void handOver(Polled polled) {
    dispatcher.post(polled);
  }

  /**
   * How far ahead of now a poll reads: twice the current pause between polls (plus a margin), so
   * that an event is in the window before it is due even if the next poll comes a little later —
   * and no further, so that polling every few milliseconds does not re-read a long stretch of
   * delayed events each time. Never above twice {@code poll_interval}.
   */
  private long lookahead() {
    if (following) {
      return lookaheadNs;
    }
    return Math.min(lookaheadNs, 2 * nextWaitNs + LOOKAHEAD_MARGIN_NS);
  }

  /** One round (the poller's thread; tests drive it). */
  public void pollOnce() {
    foundRows = false;
    following = news.followed();
    pollRound();
    // Adaptive: while due rows keep coming the next poll follows at once (BUSY_WAIT); after the
    // last
    // ones the pause grows with the quiet time — a quarter of it — up to poll_interval. An event
    // after a quiet gap waits at most about a quarter of that gap, polls during a gap grow only
    // with its logarithm, and an idle queue costs its few queries a second.
    long mono = ctx.clock().monoNs();
    if (foundRows) {
      lastFoundMono = mono;
    }
    // The dispatcher took rows that were already due and new to it (from this poll or the one
    // before): inserts are arriving. Rows read ahead of their time do not count: they are in the
    // window in time anyway, and re-reading the look-ahead every few ms would only cost.
    lastFoundMono = Math.max(lastFoundMono, feed.lastDueNewsMono());
    nextWaitNs = Math.min(intervalNs, Math.max(BUSY_WAIT_NS, (mono - lastFoundMono) / 4));
    if (following && !mode.perTenant() && !foundRows) {
      nextWaitNs = restWhileFollowed();
    }
    if (polled.takeLeftOver()) {
      // A completion event whose group could not be read or sealed is not in the window: the next
      // pass reads it again (from the front of the index), at the polling pace.
      news.readAgainLater();
      nextWaitNs = Math.min(nextWaitNs, intervalNs);
    }
    if (following && news.unread(mono)) {
      // A row the binlog told of was not visible yet to the read it woke: read again shortly.
      nextWaitNs = Math.min(nextWaitNs, UNREAD_WAIT_NS);
    }
    news.readAhead(lookahead());
  }

  /**
   * The rest while the binlog is followed and no backlog is being paged through: until the earliest
   * row heard of is half a read-ahead from due (the read then covers it), or the safety poll.
   */
  private long restWhileFollowed() {
    long rest = Math.max(intervalNs, SAFETY_POLL_NS);
    long now = ctx.clock().nowNs();
    long next = news.nextDueNs();
    if (next != Long.MAX_VALUE) {
      long until = next - lookaheadNs / 2 - now;
      rest = Math.min(rest, Math.max(MIN_WAIT_NS, until));
    }
    if (news.overflowUntilNs() > now + lookaheadNs) {
      // More rows were told than remembered: the polling pace until a read covers them.
      rest = Math.min(rest, intervalNs);
    }
    return rest;
  }

  private void pollRound() {
    long mono = ctx.clock().monoNs();
    if (ctx.clock().sinceSyncNs() >= SYNC_EVERY_NS || !ctx.clock().synced()) {
      ctx.clock().sync(ctx.dispatch()::serverTimeNs);
    }
    if (following) {
      // What the binlog told of up to this read's horizon is read now (it was committed before).
      news.covered(ctx.clock().nowNs() + lookahead());
    }
    // The slower, occasional work of a pass comes first (this scan, then a round), the read of
    // new rows last: what committed meanwhile is read in the same pass.
    if (mono - lastCollect >= collector.intervalNs()) {
      collector.scan();
      lastCollect = mono;
    }
    keyTurns();
    if (fair
        && !mode.perTenant()
        && !feed.lastPollCapped()
        && lastGlobalFull
        && rounds.tenantsWaitOnDisk(mono)) {
      // A backlog deeper than the window, and tenants on disk that the window lacks.
      mode.enter(
          mono,
          rounds.knownTenants()
              + " tenants have pending events, the window holds "
              + feed.heldTenants().size());
    }
    if (fair && !mode.perTenant() && feed.lastPollCapped()) {
      mode.enter(mono, "a tenant holds its full share of the window");
    }
    if (!mode.perTenant()) {
      if (feed.cacheRoom() > 0) {
        globalPoll(mono);
      }
      return;
    }
    if (rounds.roundDue(mono)
        && !rounds.round(mono, ctx.clock().nowNs() + lookahead())
        && mode.mayLeave(mono)) {
      // No tenant at its share any more, and the mode has lasted its hold (see PollMode).
      mode.leave(mono);
      rounds.leave();
      return;
    }
    // Every pass, a round's too: rows committed while the round ran are read at once, so a quiet
    // tenant's new event waits for one short read, never for a round and a pause.
    recentPoll();
  }
}
