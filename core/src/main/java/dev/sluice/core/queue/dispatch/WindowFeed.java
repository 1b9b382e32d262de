package dev.sluice.core.queue.dispatch;

import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Polled;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.core.window.KeyLedger;
import dev.sluice.core.window.WindowCache;
import dev.sluice.db.store.PollPosition;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What comes from the {@code Poller} into the {@link WindowCache}, and what the poller sees of the
 * window: which polled rows the window takes and which it lets go (and reports, so the poller reads
 * them again), the per-tenant gaps that keep a tenant's events in poll order, the window's room as
 * the poller sizes its reads by, and the events held per tenant.
 *
 * <h2>Threads</h2>
 *
 * The window, the gaps and {@link #pollerHasMore} are the {@link Dispatcher} thread's, like every
 * method that changes them. The poller's thread reads the published figures (volatile: {@link
 * #cacheRoom}, {@link #held}, {@link #lastPollCapped}, {@link #lastDueNewsMono}), writes the row
 * size estimate ({@link #sawRows}, its thread only), takes the let-go positions ({@link
 * #drainLetGo}, a concurrent map) and asks which ordered events are held here ({@link
 * #holdsOrdered}, a concurrent set).
 */
final class WindowFeed implements WindowView {
  private static final long HELD_EVERY_NS = TimeUnit.MILLISECONDS.toNanos(20);

  private final QueueContext ctx;
  private final WindowCache window;
  private final InFlightTable table;

  /**
   * Per tenant, the position just before the earliest row let go of that no read since has covered
   * (see {@link #onPolled}).
   */
  private final Map<String, PollPosition> gaps = new HashMap<>();

  /**
   * Per tenant, the earliest poll position of a pending row the window let go of without firing it
   * (see {@code TenantRounds}): written here, drained by the poller.
   */
  private final ConcurrentHashMap<String, PollPosition> letGo = new ConcurrentHashMap<>();

  /** The last poll came back full: the poller is woken when the window has drained. */
  private boolean pollerHasMore;

  private long heldPublishedNs;

  // --- published for the poller
  private volatile int cachedCount;
  private volatile long cachedBytes;

  /** A row's size as the poller estimates it ({@link #sawRows}: poller thread only). */
  private volatile long rowBytesEstimate;

  /** Events held per tenant, for the poller's per-tenant rounds. */
  private volatile Map<String, Integer> heldSnapshot = Map.of();

  /** When a poll last brought an event that was new to the window and already due (mono ns). */
  private volatile long lastDueNewsMono = Long.MIN_VALUE / 2;

  /** The last poll brought rows a tenant's share of the window could not take. */
  private volatile boolean lastPollCapped;

  /** An ordered queue's heads: one event per key in the window or in flight. */
  private final KeyLedger keys;

  WindowFeed(QueueContext ctx, InFlightTable table) {
    this(ctx, table, k -> {});
  }

  /**
   * @param keyFreed told the key of an ordered queue's event that left (for {@code KeyTurns})
   */
  WindowFeed(QueueContext ctx, InFlightTable table, java.util.function.Consumer<Object> keyFreed) {
    this.ctx = ctx;
    this.table = table;
    this.keys = new KeyLedger(this::knows, keyFreed);
    this.window =
        new WindowCache(
            ctx.options().cacheSize(),
            ctx.options().cacheBytes(),
            ctx.tenantLimits()::cacheCap,
            ctx.options().fair());
    this.rowBytesEstimate = ctx.options().maxEventBytes();
  }

  /** The window itself (dispatcher thread). */
  WindowCache window() {
    return window;
  }

  // ------------------------------------------------------------------ dispatcher thread

  /**
   * Events read by the poller. A row may be stale: the poll's snapshot can predate a fire, ack or
   * release this thread already saw. Events this manager {@link #knows} are skipped by id, and so
   * are events settled after the poll began: the snapshot may show them still pending. Rows the
   * window turns away (over the tenant's part or cap, or the window full) are let go.
   *
   * <p>Gaps: in a per-tenant round, a tenant's rows past a row the window let go of are let go too,
   * unless the read started at or before it (the poller's rewind), so a tenant's events come into
   * the window in poll order, with no hole that a later row could be served across.
   */
  void onPolled(Polled p, long now) {
    ctx.metrics().polledRows.increment(p.events().size());
    p.tenantStarts()
        .forEach(
            (t, start) -> {
              PollPosition gap = gaps.get(t);
              if (gap != null && start.compareTo(gap) <= 0) {
                gaps.remove(t); // this read covers the gap: its rows come in order from there
              }
            });
    boolean capped = false;
    boolean dueNews = false;
    boolean full = false;
    for (CachedEvent e : p.events()) {
      if (knows(e.boxedId) || table.settledSince(e.boxedId, p.settledSeqAtStart())) {
        continue;
      }
      if (!keys.admit(e)) {
        continue; // another event of its key is here: the table keeps this one
      }
      if (full || window.held(e.tenant) >= p.part() || pastGap(p, e)) {
        letGo(e);
        continue;
      }
      WindowCache.Added added = window.add(e);
      full = added == WindowCache.Added.FULL;
      capped |= added == WindowCache.Added.TENANT_CAPPED;
      if (added == WindowCache.Added.ADDED && e.dueNs <= now) {
        dueNews = true;
        ctx.metrics().dueToWindow.record(now - e.dueNs, TimeUnit.NANOSECONDS);
      }
      if (added == WindowCache.Added.FULL || added == WindowCache.Added.TENANT_CAPPED) {
        letGo(e);
      }
    }
    if (dueNews) {
      lastDueNewsMono = ctx.clock().monoNs();
    }
    if (p.global()) {
      lastPollCapped = capped;
    }
    table.forgetSettledUpTo(p.settledSeqAtStart());
    keys.forgetAbsent(2 * (window.capacity() + table.count()));
    pollerHasMore |= p.full();
    publishHeld(ctx.clock().monoNs());
  }

  /**
   * Whether {@code id} is this manager's already: in the window, or taken from it and not settled
   * (firing, in flight, parked). A poll's copy of such a row is stale.
   */
  boolean knows(long id) {
    return knows(Long.valueOf(id));
  }

  /** The same, for an id already boxed (a polled row's: {@link CachedEvent#boxedId}). */
  private boolean knows(Long id) {
    return window.contains(id) || table.holds(id);
  }

  /** Whether {@code e}, read by a per-tenant round, lies past a gap its read did not cover. */
  private boolean pastGap(Polled p, CachedEvent e) {
    if (p.tenantStarts().isEmpty()) {
      return false;
    }
    PollPosition gap = gaps.get(e.tenant);
    return gap != null && PollPosition.at(e.dueNs, e.id).compareTo(gap) > 0;
  }

  /**
   * Each tenant in {@code keep} gives up its window events beyond that many (the last in poll
   * order); they stay pending in the table and are read back when their turn comes.
   */
  void trim(Map<String, Integer> keep) {
    int dropped = 0;
    for (Map.Entry<String, Integer> k : keep.entrySet()) {
      var gone = window.trim(k.getKey(), k.getValue());
      gone.forEach(this::letGo);
      dropped += gone.size();
    }
    if (dropped > 0) {
      ctx.metrics().windowTrimmed.increment(dropped);
    }
    publishHeld(ctx.clock().monoNs());
  }

  /** Cancelled events leave the window, and are no longer held back if they were parked. */
  void cancel(List<Long> ids) {
    for (Long id : ids) {
      CachedEvent e = window.get(id);
      window.remove(id);
      table.cancel(id);
      if (e != null) {
        keys.left(e);
      }
    }
  }

  /**
   * An event left this manager for good (settled, or changed so that it is no longer pending at the
   * epoch it was taken at): an ordered queue's key may have its next event.
   */
  void left(CachedEvent e) {
    keys.left(e);
  }

  /** Puts a pending event (back) in the window, or records that it was let go. */
  void keep(CachedEvent e) {
    WindowCache.Added added = window.add(e);
    if (added != WindowCache.Added.ADDED && added != WindowCache.Added.DUPLICATE) {
      letGo(e);
    }
  }

  /**
   * A pending event leaves the window without being fired (no room for it, trimmed, changed since
   * the poll): the row stays pending in the table, and the poller must read it again.
   */
  void letGo(CachedEvent e) {
    keys.letGo(e);
    PollPosition before = PollPosition.before(e.dueNs, e.id);
    letGo.merge(e.tenant, before, PollPosition::earlier);
    gaps.merge(e.tenant, before, PollPosition::earlier);
  }

  /**
   * Whether the poller, whose last poll came back full, should read again now: the window has
   * drained to three quarters (events and bytes). Says so once per full poll.
   */
  boolean pollerMayRead() {
    if (pollerHasMore
        && window.size() <= window.capacity() * 3 / 4
        && window.bytes() <= window.byteCapacity() / 4 * 3) {
      pollerHasMore = false;
      return true;
    }
    return false;
  }

  /** Publishes the window's figures; the per-tenant counts at most every {@link #HELD_EVERY_NS}. */
  void publish(long mono) {
    cachedCount = window.size() + table.parkedCount();
    cachedBytes = window.bytes();
    if (mono - heldPublishedNs >= HELD_EVERY_NS) {
      publishHeld(mono);
    }
  }

  /** The poller sizes its reads by these counts: after a poll or a trim they must be current. */
  private void publishHeld(long mono) {
    heldPublishedNs = mono;
    heldSnapshot = window.countByTenant();
  }

  // ------------------------------------------------------------------ any thread

  /**
   * Takes what {@link #letGo} recorded: per tenant, the position just before the earliest pending
   * row the window let go of since the last call. Each record is taken once.
   */
  @Override
  public Map<String, PollPosition> drainLetGo() {
    Map<String, PollPosition> out = new HashMap<>();
    for (String t : letGo.keySet()) {
      PollPosition p = letGo.remove(t);
      if (p != null) {
        out.put(t, p);
      }
    }
    return out;
  }

  /**
   * How many rows the next read may bring: the window's free events, and no more than its free
   * bytes hold at the estimated row size ({@link #sawRows}), so that one read of large rows cannot
   * take the heap however large cache_size is. At least one while the window holds nothing.
   */
  @Override
  public int cacheRoom() {
    int room = window.capacity() - cachedCount;
    long freeBytes = window.byteCapacity() - cachedBytes;
    long byBytes = freeBytes / Math.max(1, rowBytesEstimate);
    if (byBytes < room) {
      room = (int) Math.max(cachedCount == 0 ? 1 : 0, byBytes);
    }
    return room;
  }

  /**
   * A read brought rows of at most {@code maxRowBytes} each (poller thread). The estimate starts at
   * max_event_bytes, jumps up to the largest row read at once, and halves per read while rows stay
   * smaller: reads grow from a few rows to full pages in about a dozen reads of small rows, and
   * shrink at once when large rows come.
   */
  @Override
  public void sawRows(long maxRowBytes) {
    rowBytesEstimate = Math.max(Math.max(1, maxRowBytes), rowBytesEstimate / 2);
  }

  /** Events in the window and parked (as last published). */
  @Override
  public int cachedCount() {
    return cachedCount;
  }

  long cachedBytes() {
    return cachedBytes;
  }

  /** Tenants with events in the window (as last published). */
  @Override
  public Set<String> heldTenants() {
    return heldSnapshot.keySet();
  }

  @Override
  public int held(String tenant) {
    return heldSnapshot.getOrDefault(tenant, 0);
  }

  /** The window slots {@code tenant} may hold. */
  @Override
  public int tenantCap(String tenant) {
    return window.tenantCap(tenant);
  }

  @Override
  public boolean lastPollCapped() {
    return lastPollCapped;
  }

  /** When a poll last brought an event new to the window and already due (monotonic ns). */
  @Override
  public long lastDueNewsMono() {
    return lastDueNewsMono;
  }

  /** Whether this manager holds the ordered event {@code id} (any thread; see KeyLedger). */
  @Override
  public boolean holdsOrdered(long id) {
    return keys.holds(id);
  }

  /** The dispatcher's settle count (any thread): a poll records it when it begins. */
  @Override
  public long settledSeq() {
    return table.settledSeq();
  }
}
