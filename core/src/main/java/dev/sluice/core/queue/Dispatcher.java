package dev.sluice.core.queue;

import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Nack;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.PollPosition;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The heart of one queue: moves due events from the window to receivers.
 *
 * <h2>Threads</h2>
 *
 * One thread ({@code sluice-<shard>-<queue>-dispatcher}) owns all mutable state here — the {@link
 * WindowCache}, the in-flight table, the receiver list and each receiver's in-flight count — so it
 * needs no locks; so do the {@link ReceiverPool} and {@link TenantCredits} it owns. Other threads
 * (gRPC, poller, firer, ack batcher) never touch that state: they {@link #post} commands to the
 * inbox, which this thread runs between dispatch rounds. It makes no database call: the batched
 * fire UPDATE runs on the {@link Firer}'s thread, acks and releases on the {@link AckBatcher}'s, so
 * that neither holds up dispatch.
 *
 * <h2>A dispatch round</h2>
 *
 * Take up to {@link #MAX_BATCH} due events (tenants in turn, within the queue's {@code max_qps}:
 * {@link RateLimit}; each tenant within its in-flight cap and the reserve: {@link TenantCredits}),
 * give each to the receiver with the most free credits in its tenant's shuffle shard ({@link
 * ReceiverPool}), reserving the credit, and hand them to the firer, which fires them all with one
 * compare-and-set UPDATE per epoch (pending → fired, epoch + 1, time_next = ack deadline). Up to
 * {@link #MAX_FIRING_BATCHES} batches are being fired at once; while one is in the database the
 * next is prepared. Only when a batch's UPDATE has applied ({@link #onFired}) are its events in
 * flight and sent. An event whose CAS fails (acked, cancelled or fired elsewhere meanwhile) is
 * dropped silently.
 */
final class Dispatcher implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

  static final int MAX_BATCH = 256;

  /**
   * Batches handed to the firer and not yet back: one group in the database, the rest waiting to be
   * fired together next.
   */
  static final int MAX_FIRING_BATCHES = 4;

  private static final long IDLE_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long ERROR_PAUSE_NS = TimeUnit.MILLISECONDS.toNanos(500);

  private final QueueContext ctx;
  private final WindowCache cache;
  // --- the queue's options, owned by the dispatcher thread; changed in place by onOptions
  private long ackWaitNs;
  private int maxConcurrency;
  private RateLimit rate;
  private final TenantCredits credits;
  private final ConcurrentLinkedQueue<Runnable> inbox = new ConcurrentLinkedQueue<>();

  // --- owned by the dispatcher thread
  /**
   * Fired events by id, in the order their fires came back: deadline order (while ack_wait stays
   * the same), except that two groups fired at once may come back swapped, a few ms apart — {@link
   * #expire} stops at the first deadline not yet passed, so such an event expires at most that much
   * late. After ack_wait is shortened in place, events fired since expire at most the difference
   * late until those fired before it are settled: late, never early.
   */
  private final LinkedHashMap<Long, InFlight> inFlight = new LinkedHashMap<>();

  private final ReceiverPool receivers;

  /** All receivers' credits, taken once per fire round (for the tenant reserve). */
  private int allCreditsThisRound;

  /** Ids of events handed to the firer and not yet back: neither in the window nor in flight. */
  private final java.util.Set<Long> firing = new java.util.HashSet<>();

  private int firingBatches;

  /**
   * Per tenant, the position just before the earliest row let go of that no read since has covered
   * (see {@link #onPolled}).
   */
  private final Map<String, PollPosition> gaps = new java.util.HashMap<>();

  /** Ids settled recently, with the settle sequence number; see {@link #onPolled}. */
  private final LinkedHashMap<Long, Long> recentlySettled = new LinkedHashMap<>();

  /**
   * Events whose row another transaction held locked at their fire, by id, in the order they were
   * parked (all for {@link #PARK_NS}): they go back to the window when that has passed. Kept out of
   * the window meanwhile so that a lock held for a minute does not cost a fire every round.
   */
  private final LinkedHashMap<Long, Parked> parked = new LinkedHashMap<>();

  private record Parked(CachedEvent event, long untilNs) {}

  static final long PARK_NS = TimeUnit.MILLISECONDS.toNanos(250);

  private long pausedUntilNs;
  private boolean pollerHasMore;
  private boolean dispatching = true;

  // --- published for other threads
  private volatile long settledSeq;
  private volatile int cachedCount;
  private volatile long cachedBytes;

  /**
   * The poller's estimate of a row's size, to size its reads by the window's free bytes; written by
   * the poller's thread only ({@link #sawRows}).
   */
  private volatile long rowBytesEstimate;

  private volatile int inFlightCount;
  private volatile int receiverCount;
  private volatile boolean running = true;
  private volatile boolean paused;
  private volatile Thread thread;

  /** Per-tenant figures, republished by the dispatcher at most every {@link #TENANT_EVERY_NS}. */
  private volatile List<TenantStats> tenantSnapshot = List.of();

  /** Events held per tenant, for the poller's per-tenant rounds. */
  private volatile Map<String, Integer> heldSnapshot = Map.of();

  /** When a poll last brought an event that was new to the window and already due (mono ns). */
  private volatile long lastDueNewsMono = Long.MIN_VALUE / 2;

  /** The last poll brought rows a tenant's share of the window could not take. */
  private volatile boolean lastPollCapped;

  private long heldPublishedNs;

  /**
   * Per tenant, the earliest poll position of a pending row the window let go of without firing it
   * (see {@link TenantRounds}): written here, drained by the poller.
   */
  private final java.util.concurrent.ConcurrentHashMap<String, PollPosition> letGo =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** Per-receiver figures, republished with {@link #tenantSnapshot}. */
  private volatile List<ReceiverStats> receiverSnapshot = List.of();

  private long tenantPublishedNs;
  private static final long TENANT_EVERY_NS = TimeUnit.MILLISECONDS.toNanos(500);
  private static final long HELD_EVERY_NS = TimeUnit.MILLISECONDS.toNanos(20);

  private AckBatcher acks;
  private Poller poller;
  private Firer firer;

  Dispatcher(QueueContext ctx) {
    this(ctx, 0);
  }

  Dispatcher(QueueContext ctx, long forgetDelayNs) {
    this.ctx = ctx;
    this.cache =
        new WindowCache(
            ctx.options().cacheSize(),
            ctx.options().cacheBytes(),
            ctx.tenantLimits()::cacheCap,
            ctx.options().fair());
    this.rowBytesEstimate = ctx.options().maxEventBytes();
    this.receivers =
        new ReceiverPool(
            ctx.options().maxReceiversPerTenant(), ctx.options().classShares(), forgetDelayNs);
    this.credits =
        new TenantCredits(
            ctx.tenantLimits(),
            ctx.options().fair(),
            ctx.options().tenantReserve(),
            t -> cache.held(t) > 0);
    applyOptions(ctx.options());
  }

  /**
   * Dispatcher thread: the options that can change while events are in flight (ack_wait for later
   * fires, max_attempts, max_concurrency, max_qps) take their new values; what is in flight keeps
   * its deadline.
   */
  void onOptions(dev.sluice.db.QueueOptions o) {
    applyOptions(o);
    log.info("{}: options applied in place: {}", ctx.where(), o.asMap());
  }

  private void applyOptions(dev.sluice.db.QueueOptions o) {
    this.ackWaitNs = o.ackWait().toNanos();
    this.maxConcurrency = o.maxConcurrency();
    if (rate == null || rate.perSecond() != o.maxQps()) {
      this.rate = new RateLimit(o.maxQps());
    }
  }

  void wire(AckBatcher acks, Poller poller, Firer firer) {
    this.acks = acks;
    this.poller = poller;
    this.firer = firer;
  }

  // ------------------------------------------------------------------ any thread

  /** Runs {@code command} on the dispatcher thread, soon. */
  void post(Runnable command) {
    inbox.add(command);
    wake();
  }

  void wake() {
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  void stop() {
    running = false;
    wake();
  }

  /** Paused: nothing new is fired; acks, nacks and timeouts still apply. */
  void setPaused(boolean p) {
    paused = p;
    wake();
  }

  boolean paused() {
    return paused;
  }

  List<TenantStats> tenants() {
    return tenantSnapshot;
  }

  /** Tenants with events in the window (as last published). */
  java.util.Set<String> heldTenants() {
    return heldSnapshot.keySet();
  }

  int held(String tenant) {
    return heldSnapshot.getOrDefault(tenant, 0);
  }

  /** The window slots {@code tenant} may hold. */
  int tenantCap(String tenant) {
    return cache.tenantCap(tenant);
  }

  boolean lastPollCapped() {
    return lastPollCapped;
  }

  /**
   * Takes what {@link #letGo} recorded: per tenant, the position just before the earliest pending
   * row the window let go of since the last call. Any thread; each record is taken once.
   */
  Map<String, PollPosition> drainLetGo() {
    Map<String, PollPosition> out = new java.util.HashMap<>();
    for (String t : letGo.keySet()) {
      PollPosition p = letGo.remove(t);
      if (p != null) {
        out.put(t, p);
      }
    }
    return out;
  }

  /** When a poll last brought an event new to the window and already due (System.nanoTime). */
  long lastDueNewsMono() {
    return lastDueNewsMono;
  }

  List<ReceiverStats> receivers() {
    return receiverSnapshot;
  }

  long settledSeq() {
    return settledSeq;
  }

  /**
   * How many rows the next read may bring: the window's free events, and no more than its free
   * bytes hold at the estimated row size ({@link #sawRows}), so that one read of large rows cannot
   * take the heap however large cache_size is. At least one while the window holds nothing.
   */
  int cacheRoom() {
    int room = cache.capacity() - cachedCount;
    long freeBytes = cache.byteCapacity() - cachedBytes;
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
  void sawRows(long maxRowBytes) {
    rowBytesEstimate = Math.max(Math.max(1, maxRowBytes), rowBytesEstimate / 2);
  }

  long rowBytesEstimate() {
    return rowBytesEstimate;
  }

  int cachedCount() {
    return cachedCount;
  }

  long cachedBytes() {
    return cachedBytes;
  }

  int inFlightCount() {
    return inFlightCount;
  }

  int receiverCount() {
    return receiverCount;
  }

  // ------------------------------------------------------------------ the loop

  @Override
  public void run() {
    thread = Thread.currentThread();
    while (running) {
      try {
        FaultHook.check(FaultHook.DISPATCHER, ctx.queue());
        runInbox();
        long now = ctx.clock().nowNs();
        expire(now);
        receivers.forgetDeparted(System.nanoTime());
        unpark(now);
        cache.promoteDue(now);
        publish();
        if (dispatching
            && !paused
            && now >= pausedUntilNs
            && firingBatches < MAX_FIRING_BATCHES
            && cache.hasReady()
            && freeSlots() > 0
            && rate.available(System.nanoTime()) > 0) {
          if (fireRound(now)) {
            continue;
          }
        }
        if (pollerHasMore
            && cache.size() <= cache.capacity() * 3 / 4
            && cache.bytes() <= cache.byteCapacity() / 4 * 3) {
          pollerHasMore = false;
          poller.wake();
        }
        long wait = IDLE_WAIT_NS;
        long next = cache.nextDueNs();
        if (next != Long.MAX_VALUE) {
          wait = Math.min(wait, Math.max(0, next - now));
        }
        if (now < pausedUntilNs) {
          wait = Math.min(wait, pausedUntilNs - now);
        }
        if (!parked.isEmpty()) {
          wait = Math.min(wait, Math.max(0, parked.values().iterator().next().untilNs() - now));
        }
        if (rate.limited() && cache.hasReady()) {
          long untilToken = rate.waitNs(System.nanoTime());
          if (untilToken > 0) {
            wait = Math.min(wait, untilToken);
          }
        }
        if (inbox.isEmpty() && wait > 0) {
          LockSupport.parkNanos(this, wait);
        }
      } catch (Throwable t) { // an Error too: this thread owns the queue's state; it must go on
        ctx.faults().caught(FaultHook.DISPATCHER, t);
        pausedUntilNs = ctx.clock().nowNs() + ERROR_PAUSE_NS;
      }
    }
    runInbox();
    publish();
  }

  /** Runs what other threads posted; the dispatcher's loop does this, tests may drive it. */
  void runInbox() {
    Runnable r;
    while ((r = inbox.poll()) != null) {
      r.run();
    }
  }

  private void publish() {
    cachedCount = cache.size() + parked.size();
    cachedBytes = cache.bytes();
    inFlightCount = inFlight.size() + firing.size();
    receiverCount = receivers.size();
    long mono = System.nanoTime();
    if (mono - heldPublishedNs >= HELD_EVERY_NS) {
      publishHeld(mono);
    }
    if (mono - tenantPublishedNs >= TENANT_EVERY_NS) {
      tenantPublishedNs = mono;
      Map<String, Integer> queued = cache.countByTenant();
      List<TenantStats> out = new ArrayList<>();
      java.util.Set<String> names = new java.util.TreeSet<>(credits.tenants());
      names.addAll(queued.keySet());
      for (String t : names) {
        out.add(
            new TenantStats(
                t,
                queued.getOrDefault(t, 0),
                credits.held(t),
                credits.dispatchedTotal(t),
                credits.waitNsTotal(t),
                credits.recentMaxWaitNs(t, mono)));
      }
      tenantSnapshot = List.copyOf(out);
      List<ReceiverStats> rs = new ArrayList<>(receivers.size());
      for (AttachedOutlet r : receivers.all()) {
        rs.add(
            new ReceiverStats(
                r.receiverId(), r.streamId(), r.inFlight, r.maxInFlight(), r.draining()));
      }
      receiverSnapshot = List.copyOf(rs);
    }
  }

  /** The poller sizes its reads by these counts: after a poll or a trim they must be current. */
  private void publishHeld(long mono) {
    heldPublishedNs = mono;
    heldSnapshot = cache.countByTenant();
  }

  /**
   * A pending event leaves the window without being fired (no room for it, trimmed): the row stays
   * pending in the table, and the poller must read it again.
   */
  private void letGo(CachedEvent e) {
    PollPosition before = PollPosition.before(e.dueNs, e.id);
    letGo.merge(e.tenant, before, PollPosition::earlier);
    gaps.merge(e.tenant, before, PollPosition::earlier);
  }

  /** Holds back an event whose row was locked by another transaction; see {@link #parked}. */
  private void park(CachedEvent e, long now) {
    parked.put(e.id, new Parked(e, now + PARK_NS));
  }

  private void unpark(long now) {
    Iterator<Parked> it = parked.values().iterator();
    while (it.hasNext()) {
      Parked p = it.next();
      if (p.untilNs() > now) {
        break;
      }
      it.remove();
      keep(p.event());
    }
  }

  /** Puts a pending event (back) in the window, or records that it was let go. */
  private void keep(CachedEvent e) {
    WindowCache.Added added = cache.add(e);
    if (added != WindowCache.Added.ADDED && added != WindowCache.Added.DUPLICATE) {
      letGo(e);
    }
  }

  /** Free credits on the receivers, within the queue's max_concurrency. */
  private int freeSlots() {
    int free = receivers.freeCredits();
    if (maxConcurrency > 0) {
      free = Math.min(free, maxConcurrency - inFlight.size() - firing.size());
    }
    return free;
  }

  // ------------------------------------------------------------------ assignment

  /**
   * Whether {@code tenant} may have one more event in flight: within its cap and the reserve (see
   * {@link TenantCredits}), and with a free credit on a receiver that serves it.
   */
  private boolean tenantCanTake(String tenant) {
    return credits.mayTake(tenant, this::freeSlots, () -> allCreditsThisRound)
        && receivers.hasFreeCreditFor(tenant);
  }

  private boolean eventCanTake(CachedEvent e) {
    return receivers.pick(e, false) != null;
  }

  /** Takes a credit of {@code r} for {@code e}; false when another shard took the last one. */
  private boolean assign(AttachedOutlet r, CachedEvent e) {
    if (!r.tryReserve(e.workClass)) {
      return false;
    }
    credits.take(e.tenant);
    return true;
  }

  private void unassign(AttachedOutlet r, CachedEvent e) {
    r.unreserve(e.workClass);
    credits.giveBack(e.tenant);
  }

  /** Gives back the credit an in-flight event held (once). */
  private void free(InFlight f) {
    if (!f.freed) {
      f.freed = true;
      unassign(f.owner, f.event);
    }
  }

  /** Takes a batch of due events for free receivers and hands it to the firer; false if none. */
  private boolean fireRound(long now) {
    long mono = System.nanoTime();
    int budget = Math.min(MAX_BATCH, Math.min(freeSlots(), rate.available(mono)));
    allCreditsThisRound = receivers.allCredits();
    List<CachedEvent> events = new ArrayList<>(budget);
    List<AttachedOutlet> owners = new ArrayList<>(budget);
    while (events.size() < budget) {
      CachedEvent e = cache.takeReady(this::tenantCanTake, this::eventCanTake);
      if (e == null) {
        break;
      }
      AttachedOutlet r = receivers.pick(e, true);
      if (r == null || !assign(r, e)) {
        keep(e); // a credit went to another shard meanwhile: try again next round
        break;
      }
      events.add(e);
      owners.add(r);
    }
    if (events.isEmpty()) {
      return false;
    }
    rate.took(mono, events.size());
    List<EventRef> refs = new ArrayList<>(events.size());
    for (CachedEvent e : events) {
      refs.add(new EventRef(e.id, e.epoch));
      firing.add(e.id);
    }
    firingBatches++;
    firer.submit(new Firer.Batch(events, owners, refs, now, saturatedAdd(now, ackWaitNs)));
    inFlightCount = inFlight.size() + firing.size();
    return true;
  }

  /**
   * A batch came back from the firer. Fired events go in flight and are sent — unless their
   * receiver left or dispatch stopped meanwhile: those are released at once, without backoff (they
   * were never sent). A batch whose UPDATE failed goes back to the window.
   */
  void onFired(Firer.Batch b) {
    firingBatches--;
    List<CachedEvent> events = b.events;
    for (CachedEvent e : events) {
      firing.remove(e.id);
    }
    if (b.error != null) {
      // Unknown whether it committed. Put the events back: if it did, their epoch is stale and
      // the next fire's CAS drops them; the rows come back through the retry collector.
      for (int i = 0; i < events.size(); i++) {
        unassign(b.owners.get(i), events.get(i));
        keep(events.get(i));
      }
      ctx.metrics().dbErrors.increment();
      log.warn(
          "{}: firing {} events failed, retrying shortly: {}",
          ctx.where(),
          events.size(),
          b.error.toString());
      pausedUntilNs = ctx.clock().nowNs() + ERROR_PAUSE_NS;
      publish();
      return;
    }
    long now = b.firedAtNs;
    long mono = System.nanoTime();
    Map<AttachedOutlet, List<Delivery>> out = new LinkedHashMap<>();
    int sent = 0;
    for (int i = 0; i < events.size(); i++) {
      CachedEvent e = events.get(i);
      AttachedOutlet r = b.owners.get(i);
      EventRef ref = b.refs.get(i);
      if (b.outcome.get(ref) != CasOutcome.APPLIED) {
        unassign(r, e);
        if (b.locked.contains(e.id)) {
          park(e, now);
        } else if (b.changed.contains(e.id)) {
          letGo(e); // rescheduled or changed since the poll: read again, as it is now
        } else {
          ctx.metrics().casMisses.increment();
        }
        continue;
      }
      long epoch = e.epoch + 1;
      InFlight f = new InFlight(e, epoch, r, now, b.firedDeadlineNs);
      inFlight.put(e.id, f);
      if (!dispatching || !receivers.contains(r)) {
        f.settling = true;
        free(f);
        acks.submit(
            Completion.release(
                new EventRef(e.id, epoch), now, false, null, "receiver gone before the send"));
        continue;
      }
      long waitNs = Math.max(0, now - e.dueNs);
      ctx.metrics().dueToDispatch.record(waitNs, TimeUnit.NANOSECONDS);
      credits.dispatched(e.tenant, waitNs, mono);
      Map<String, Object> columns = b.columns.getOrDefault(e.id, e.columns);
      out.computeIfAbsent(r, k -> new ArrayList<>()).add(delivery(e, columns, epoch, now));
      sent++;
    }
    ctx.metrics().dispatched.increment(sent);
    out.forEach(AttachedOutlet::deliver);
    inFlightCount = inFlight.size() + firing.size();
  }

  private Delivery delivery(CachedEvent e, Map<String, Object> columns, long epoch, long now) {
    return new Delivery(
        ctx.shard(),
        ctx.queue(),
        e.id,
        epoch,
        e.tenant,
        e.priority,
        e.dueNs,
        e.createdNs,
        now,
        e.workClass,
        e.actorPath,
        columns);
  }

  /** Ack deadlines that passed: back to pending with backoff, or dead. */
  private void expire(long now) {
    for (InFlight f : inFlight.values()) {
      if (f.deadlineNs > now) {
        break;
      }
      if (!f.settling) {
        f.settling = true;
        free(f);
        ctx.metrics().timeouts.increment();
        acks.submit(releaseOf(new EventRef(f.event.id, f.epoch), now, 0, null, "ack timeout"));
      }
    }
  }

  /** A failed attempt, on its way to pending with backoff or to dead: see {@link RetryPolicy}. */
  private Completion releaseOf(
      EventRef ref, long now, long retryAfterNs, AttachedOutlet from, String reason) {
    return Completion.failed(
        ctx.retry().afterFailure(ref, now, retryAfterNs, reason), from, reason);
  }

  /** {@code a + b}, held at the ends of a long instead of wrapping. */
  static long saturatedAdd(long a, long b) {
    long r = a + b;
    if (((a ^ r) & (b ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }

  // ------------------------------------------------------------------ commands (dispatcher thread)

  void onAttach(AttachedOutlet r) {
    receivers.attach(r);
    receiverCount = receivers.size();
  }

  /** The stream ended or broke: release what it held at once, not after ack_wait. */
  void onDetach(AttachedOutlet r, String why) {
    if (!receivers.detach(r, System.nanoTime())) {
      return;
    }
    long now = ctx.clock().nowNs();
    int released = 0;
    for (InFlight f : inFlight.values()) {
      if (f.owner == r && !f.settling) {
        f.settling = true;
        free(f);
        acks.submit(releaseOf(new EventRef(f.event.id, f.epoch), now, 0, null, why));
        released++;
      }
    }
    receiverCount = receivers.size();
    if (released > 0) {
      log.info(
          "{}: {} gone ({}), releasing its {} in-flight events", ctx.where(), r, why, released);
    }
  }

  void onAcks(AttachedOutlet from, List<EventRef> refs) {
    long now = ctx.clock().nowNs();
    for (EventRef ref : refs) {
      InFlight f = inFlight.get(ref.id());
      if (f != null && f.epoch == ref.epoch() && !f.settling) {
        f.settling = true;
        free(f);
        ctx.metrics().dispatchToAck.record(Math.max(0, now - f.firedAtNs), TimeUnit.NANOSECONDS);
      }
      // Unknown to this manager (fired before a restart, say): the database decides.
      acks.submit(Completion.ack(ref, from));
    }
  }

  /**
   * Acks the receiver applied in its own transaction (same CAS as ours) and committed: the row is
   * acked already, so the event leaves the in-flight table without an UPDATE, a retry at its
   * deadline or a stale ack. A receiver that claims a commit that did not happen costs only that
   * event's time: the row is still fired, and the old-event collector returns it to pending after
   * its ack deadline.
   */
  void onCommitted(AttachedOutlet from, List<EventRef> refs) {
    long now = ctx.clock().nowNs();
    for (EventRef ref : refs) {
      InFlight f = inFlight.get(ref.id());
      if (f == null || f.epoch != ref.epoch() || f.settling || f.owner != from) {
        continue;
      }
      inFlight.remove(ref.id());
      free(f);
      ctx.metrics()
          .dispatchToAck
          .record(Math.max(0, now - (f.deadlineNs - ackWaitNs)), TimeUnit.NANOSECONDS);
      ctx.metrics().acked.increment();
      settledSeq++;
      recentlySettled.remove(ref.id());
      recentlySettled.put(ref.id(), settledSeq);
    }
    publish();
  }

  void onNacks(AttachedOutlet from, List<Nack> nacks) {
    long now = ctx.clock().nowNs();
    for (Nack n : nacks) {
      EventRef ref = n.ref();
      InFlight f = inFlight.get(ref.id());
      if (f != null && f.epoch == ref.epoch() && !f.settling) {
        f.settling = true;
        free(f);
      }
      ctx.metrics().nacked.increment();
      String why = n.reason() == null || n.reason().isEmpty() ? "nack" : "nack: " + n.reason();
      acks.submit(releaseOf(ref, now, n.retryAfterNs(), from, why));
    }
  }

  /** The outlet gave events back through no fault of theirs: pending again at once. */
  void onReleased(AttachedOutlet from, List<EventRef> refs, String why) {
    long now = ctx.clock().nowNs();
    for (EventRef ref : refs) {
      InFlight f = inFlight.get(ref.id());
      if (f != null && f.epoch == ref.epoch() && !f.settling) {
        f.settling = true;
        free(f);
      }
      acks.submit(Completion.release(ref, now, false, from, why));
    }
  }

  /**
   * Results of acks and releases from the ack batcher. An event leaves the in-flight table when a
   * change to it applied, or when none applied: then the table no longer shows it fired at that
   * epoch (another path settled it) and this manager must not go on holding it.
   */
  void onSettled(List<Completion> done, List<CasOutcome> outcomes) {
    java.util.Set<Long> applied = new java.util.HashSet<>();
    for (int i = 0; i < done.size(); i++) {
      if (outcomes.get(i) == CasOutcome.APPLIED) {
        applied.add(done.get(i).ref().id());
      }
    }
    for (int i = 0; i < done.size(); i++) {
      Completion c = done.get(i);
      long id = c.ref().id();
      InFlight f = inFlight.get(id);
      if (f == null || f.epoch != c.ref().epoch()) {
        continue;
      }
      boolean ok = outcomes.get(i) == CasOutcome.APPLIED;
      if (!ok && applied.contains(id)) {
        continue; // another change to the same event in this batch applied
      }
      inFlight.remove(id);
      free(f);
      settledSeq++;
      recentlySettled.remove(id);
      recentlySettled.put(id, settledSeq);
      if (ok && c.kind() == Completion.Kind.RELEASE && !c.dead()) {
        keep(f.event.retry(c.ref().epoch(), c.retryAtNs()));
      }
    }
    publish();
  }

  /**
   * Events read by the poller. A row may be stale: the poll's snapshot can predate a fire, ack or
   * release this thread already saw. Events in the window or in flight are skipped by id, and so
   * are events settled after the poll began: the snapshot may show them still pending. Rows the
   * window turns away (over the tenant's part or cap, or the window full) are let go.
   *
   * <p>Gaps: in a per-tenant round, a tenant's rows past a row the window let go of are let go too,
   * unless the read started at or before it (the poller's rewind), so a tenant's events come into
   * the window in poll order, with no hole that a later row could be served across.
   */
  void onPolled(Polled p) {
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
    long now = ctx.clock().nowNs();
    boolean full = false;
    for (CachedEvent e : p.events()) {
      long id = e.id;
      if (cache.contains(id)
          || inFlight.containsKey(id)
          || firing.contains(id)
          || parked.containsKey(id)) {
        continue;
      }
      Long settledAt = recentlySettled.get(id);
      if (settledAt != null && settledAt > p.settledSeqAtStart()) {
        continue;
      }
      if (full || cache.held(e.tenant) >= p.part() || pastGap(p, e)) {
        letGo(e);
        continue;
      }
      WindowCache.Added added = cache.add(e);
      full = added == WindowCache.Added.FULL;
      capped |= added == WindowCache.Added.TENANT_CAPPED;
      dueNews |= added == WindowCache.Added.ADDED && e.dueNs <= now;
      if (added == WindowCache.Added.FULL || added == WindowCache.Added.TENANT_CAPPED) {
        letGo(e);
      }
    }
    if (dueNews) {
      lastDueNewsMono = System.nanoTime();
    }
    if (p.global()) {
      lastPollCapped = capped;
    }
    // Later polls start at or after this one's settle count: older entries can no longer matter.
    Iterator<Map.Entry<Long, Long>> it = recentlySettled.entrySet().iterator();
    while (it.hasNext() && it.next().getValue() <= p.settledSeqAtStart()) {
      it.remove();
    }
    pollerHasMore |= p.full();
    publishHeld(System.nanoTime());
    publish();
  }

  /** Whether {@code e}, read by a per-tenant round, lies past a gap its read did not cover. */
  private boolean pastGap(Polled p, CachedEvent e) {
    if (p.tenantStarts().isEmpty()) {
      return false;
    }
    PollPosition gap = gaps.get(e.tenant);
    return gap != null && PollPosition.at(e.dueNs, e.id).compareTo(gap) > 0;
  }

  /** Fired rows past their deadline found in the table: ours are handled by {@link #expire}. */
  void onOrphans(List<EventRef> refs) {
    long now = ctx.clock().nowNs();
    for (EventRef ref : refs) {
      if (!inFlight.containsKey(ref.id())) {
        acks.submit(releaseOf(ref, now, 0, null, "orphan (no live owner)"));
      }
    }
  }

  /**
   * The poller's per-tenant round found tenants waiting on disk and no room for them: each tenant
   * in {@code keep} gives up its window events beyond that many (the last in poll order). They stay
   * pending in the table and are read back when their turn comes.
   */
  void onTrim(Map<String, Integer> keep) {
    int dropped = 0;
    for (Map.Entry<String, Integer> k : keep.entrySet()) {
      List<CachedEvent> gone = cache.trim(k.getKey(), k.getValue());
      gone.forEach(this::letGo);
      dropped += gone.size();
    }
    if (dropped > 0) {
      ctx.metrics().windowTrimmed.increment(dropped);
    }
    publishHeld(System.nanoTime());
    publish();
  }

  void onCancelled(List<Long> ids) {
    for (Long id : ids) {
      cache.remove(id);
      parked.remove(id);
    }
    publish();
  }

  /** Graceful stop, step 1: no new sends. */
  void onStopDispatching() {
    dispatching = false;
  }

  /** Graceful stop, step 2: release whatever receivers still hold, without backoff. */
  void onReleaseAll(String why) {
    long now = ctx.clock().nowNs();
    for (InFlight f : inFlight.values()) {
      if (!f.settling) {
        f.settling = true;
        free(f);
        acks.submit(Completion.release(new EventRef(f.event.id, f.epoch), now, false, null, why));
      }
    }
  }
}
