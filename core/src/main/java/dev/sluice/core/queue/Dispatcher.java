package dev.sluice.core.queue;

import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Nack;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The heart of one queue: moves due events from the window to outlets.
 *
 * <h2>Threads</h2>
 *
 * One thread ({@code sluice-<shard>-<queue>-dispatcher}) owns all mutable state of the queue's
 * dispatch, one ledger per class, so it needs no locks: the window and what the poller brings into
 * it ({@link WindowFeed}), the events taken from it and not yet settled ({@link InFlightTable}),
 * the outlets' and tenants' credits ({@link CreditLedger}); {@link Settlements} decides what
 * becomes of events in flight, {@link PublishedStats} is what other threads read. Other threads
 * (outlets, poller, firer, ack batcher) never touch that state: they {@link #post} commands to the
 * {@link Inbox}, which this thread runs between dispatch rounds. It makes no database call: the
 * batched fire UPDATE runs on the {@link Firer}'s thread, acks and releases on the {@link
 * AckBatcher}'s, so that neither holds up dispatch.
 *
 * <h2>A dispatch round</h2>
 *
 * Take up to {@link #MAX_BATCH} due events (tenants in turn, within the queue's {@code max_qps}:
 * {@link RateLimit}; each tenant within its in-flight cap and the reserve: {@link TenantCredits}),
 * give each to the outlet with the most free credits in its tenant's shuffle shard ({@link
 * ReceiverPool}), reserving the credit, and hand them to the firer, which fires them all with one
 * compare-and-set UPDATE per epoch (pending → fired, epoch + 1, time_next = ack deadline). Up to
 * {@link #MAX_FIRING_BATCHES} batches are being fired at once; while one is in the database the
 * next is prepared. Only when a batch's UPDATE has applied ({@link #onFired}) are its events in
 * flight and sent. An event whose CAS fails (acked, cancelled or fired elsewhere meanwhile) is
 * dropped silently. Every failed attempt goes back through the {@link RetryPolicy}.
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
  private final InFlightTable table = new InFlightTable();

  /**
   * Batches handed to the firer whose {@link #onFired} has not run: their credits are taken. Only a
   * queue abandoned mid-fire leaves some here for good (see {@link #abandonHeld}).
   */
  private final Set<Firer.Batch> firerHolds = Collections.newSetFromMap(new IdentityHashMap<>());

  private final WindowFeed feed;
  private final CreditLedger ledger;
  private final PublishedStats stats;
  private final Inbox inbox = new Inbox();

  // --- owned by the dispatcher thread; the options changed in place by onOptions
  private RateLimit rate;
  private long pausedUntilNs;
  private boolean dispatching = true;

  private volatile boolean running = true;
  private volatile boolean paused;

  private Settlements settlements;
  private Poller poller;
  private Firer firer;

  Dispatcher(QueueContext ctx) {
    this(ctx, 0);
  }

  Dispatcher(QueueContext ctx, long forgetDelayNs) {
    this.ctx = ctx;
    this.feed = new WindowFeed(ctx, table);
    this.ledger =
        new CreditLedger(ctx, forgetDelayNs, t -> feed.window().held(t) > 0, table::count);
    this.stats = new PublishedStats(table, ledger, feed);
    applyOptions(ctx.options());
  }

  /**
   * Dispatcher thread: the options that can change while events are in flight (max_concurrency,
   * max_qps) take their new values; ack_wait ({@link #ackWaitNs()}), the backoffs and max_attempts
   * ({@link QueueContext#retry()}) are read from the queue's current options where used; what is in
   * flight keeps its deadline.
   */
  void onOptions(QueueOptions o) {
    applyOptions(o);
    log.info("{}: options applied in place: {}", ctx.where(), o.asMap());
  }

  /** The queue's ack_wait now, for later fires: the one value every reader of it sees. */
  private long ackWaitNs() {
    return ctx.options().ackWait().toNanos();
  }

  private void applyOptions(QueueOptions o) {
    ledger.maxConcurrency(o.maxConcurrency());
    if (rate == null || rate.perSecond() != o.maxQps()) {
      this.rate = new RateLimit(o.maxQps());
    }
  }

  void wire(AckBatcher acks, Poller poller, Firer firer) {
    this.settlements = new Settlements(ctx, table, ledger, feed, acks::submit);
    this.poller = poller;
    this.firer = firer;
  }

  // ------------------------------------------------------------------ any thread

  /** Runs {@code command} on the dispatcher thread, soon. */
  void post(Runnable command) {
    inbox.post(command);
  }

  void wake() {
    inbox.wake();
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

  /** The window as the poller sees and feeds it. */
  WindowFeed feed() {
    return feed;
  }

  List<TenantStats> tenants() {
    return stats.tenants();
  }

  List<ReceiverStats> receivers() {
    return stats.receivers();
  }

  int cachedCount() {
    return feed.cachedCount();
  }

  long cachedBytes() {
    return feed.cachedBytes();
  }

  int inFlightCount() {
    return stats.inFlightCount();
  }

  int receiverCount() {
    return stats.receiverCount();
  }

  // ------------------------------------------------------------------ the loop

  @Override
  public void run() {
    inbox.ownedBy(Thread.currentThread());
    while (running) {
      try {
        FaultHook.check(FaultHook.DISPATCHER, ctx.queue());
        runInbox();
        long now = ctx.clock().nowNs();
        settlements.expire(now);
        ledger.forgetDeparted(System.nanoTime());
        table.unpark(now).forEach(feed::keep);
        feed.window().promoteDue(now);
        stats.publish();
        if (dispatching
            && !paused
            && now >= pausedUntilNs
            && table.firingBatches() < MAX_FIRING_BATCHES
            && feed.window().hasReady()
            && ledger.freeSlots() > 0
            && rate.available(System.nanoTime()) > 0
            && fireRound(now)) {
          continue;
        }
        if (feed.pollerMayRead()) {
          poller.wake();
        }
        inbox.sleep(this, waitNs(now));
      } catch (Throwable t) { // an Error too: this thread owns the queue's state; it must go on
        ctx.faults().caught(FaultHook.DISPATCHER, t);
        pausedUntilNs = ctx.clock().nowNs() + ERROR_PAUSE_NS;
      }
    }
    runInbox();
    stats.publish();
  }

  /** How long the loop may sleep: until the next due or parked event, pause end or rate token. */
  private long waitNs(long now) {
    long wait = IDLE_WAIT_NS;
    long next = Math.min(feed.window().nextDueNs(), table.nextUnparkNs());
    if (next != Long.MAX_VALUE) {
      wait = Math.min(wait, Math.max(0, next - now));
    }
    if (now < pausedUntilNs) {
      wait = Math.min(wait, pausedUntilNs - now);
    }
    if (rate.limited() && feed.window().hasReady()) {
      long untilToken = rate.waitNs(System.nanoTime());
      if (untilToken > 0) {
        wait = Math.min(wait, untilToken);
      }
    }
    return wait;
  }

  /** Runs what other threads posted; the dispatcher's loop does this, tests may drive it. */
  void runInbox() {
    inbox.runAll();
  }

  /** Takes a batch of due events for free outlets and hands it to the firer; false if none. */
  private boolean fireRound(long now) {
    long mono = System.nanoTime();
    int budget = Math.min(MAX_BATCH, Math.min(ledger.freeSlots(), rate.available(mono)));
    ledger.startRound();
    List<CachedEvent> events = new ArrayList<>(budget);
    List<AttachedOutlet> owners = new ArrayList<>(budget);
    while (events.size() < budget) {
      CachedEvent e = feed.window().takeReady(ledger::tenantCanTake, ledger::eventCanTake);
      if (e == null) {
        break;
      }
      AttachedOutlet r = ledger.assign(e);
      if (r == null) {
        feed.keep(e); // a credit went to another shard meanwhile: try again next round
        break;
      }
      events.add(e);
      owners.add(r);
    }
    if (events.isEmpty()) {
      return false;
    }
    rate.took(mono, events.size());
    table.firing(events);
    Firer.Batch batch = new Firer.Batch(events, owners, now, Backoff.at(now, ackWaitNs()));
    firerHolds.add(batch);
    firer.submit(batch);
    stats.inFlightChanged();
    return true;
  }

  /**
   * A batch came back from the firer. Fired events go in flight and are sent — unless their outlet
   * left or dispatch stopped meanwhile: those are released at once, without backoff (they were
   * never sent). A batch whose UPDATE failed goes back to the window.
   */
  void onFired(Firer.Batch b) {
    firerHolds.remove(b);
    List<CachedEvent> events = b.events;
    table.fireReturned(events);
    if (b.error != null) {
      // Unknown whether it committed. Put the events back: if it did, their epoch is stale and
      // the next fire's CAS drops them; the rows come back through the retry collector.
      for (int i = 0; i < events.size(); i++) {
        ledger.unassign(b.owners.get(i), events.get(i));
        feed.keep(events.get(i));
      }
      ctx.metrics().dbErrors.increment();
      log.warn(
          "{}: firing {} events failed, retrying shortly: {}",
          ctx.where(),
          events.size(),
          b.error.toString());
      pausedUntilNs = ctx.clock().nowNs() + ERROR_PAUSE_NS;
      stats.publish();
      return;
    }
    long now = b.firedAtNs;
    long mono = System.nanoTime();
    Map<AttachedOutlet, List<Delivery>> out = new LinkedHashMap<>();
    int sent = 0;
    for (int i = 0; i < events.size(); i++) {
      CachedEvent e = events.get(i);
      AttachedOutlet r = b.owners.get(i);
      if (b.outcome.get(b.refs.get(i)) != CasOutcome.APPLIED) {
        ledger.unassign(r, e);
        if (b.locked.contains(e.id)) {
          table.park(e, now);
        } else if (b.changed.contains(e.id)) {
          feed.letGo(e); // rescheduled or changed since the poll: read again, as it is now
        } else {
          ctx.metrics().casMisses.increment();
        }
        continue;
      }
      InFlight f = table.fired(e, r, now, b.firedDeadlineNs);
      if (!dispatching || !ledger.attached(r)) {
        settlements.unsent(f, now);
        continue;
      }
      long waitNs = Math.max(0, now - e.dueNs);
      ctx.metrics().dueToDispatch.record(waitNs, TimeUnit.NANOSECONDS);
      ledger.dispatched(e.tenant, waitNs, mono);
      Map<String, Object> columns = b.columns.getOrDefault(e.id, e.columns);
      out.computeIfAbsent(r, k -> new ArrayList<>())
          .add(f.delivery(ctx.shard(), ctx.queue(), columns));
      sent++;
    }
    ctx.metrics().dispatched.increment(sent);
    out.forEach(AttachedOutlet::deliver);
    stats.inFlightChanged();
  }

  // ------------------------------------------------------------------ commands (dispatcher thread)

  void onAttach(AttachedOutlet r) {
    ledger.attach(r);
    stats.outletsChanged();
  }

  /**
   * The outlet ended (its stream ended or broke): release what it held at once, not ack_wait later.
   */
  void onDetach(AttachedOutlet r, String why) {
    if (!ledger.detach(r, System.nanoTime())) {
      return;
    }
    settlements.detached(r, why);
    stats.outletsChanged();
  }

  void onAcks(AttachedOutlet from, List<EventRef> refs) {
    settlements.acked(from, refs);
  }

  /** Acks the receiver committed itself: see {@link Settlements#committed}. */
  void onCommitted(AttachedOutlet from, List<EventRef> refs) {
    settlements.committed(from, refs, ackWaitNs());
    stats.publish();
  }

  void onNacks(AttachedOutlet from, List<Nack> nacks) {
    settlements.nacked(from, nacks);
  }

  /** The outlet gave events back through no fault of theirs: pending again at once. */
  void onReleased(AttachedOutlet from, List<EventRef> refs, String why) {
    settlements.released(from, refs, why);
  }

  /** Results of acks and releases from the ack batcher: see {@link Settlements#settled}. */
  void onSettled(List<Completion> done, List<CasOutcome> outcomes) {
    settlements.settled(done, outcomes);
    stats.publish();
  }

  /** Events read by the poller: see {@link WindowFeed#onPolled}. */
  void onPolled(Polled p) {
    feed.onPolled(p, ctx.clock().nowNs());
    stats.publish();
  }

  /** Fired rows past their deadline found in the table: ours time out on their own. */
  void onOrphans(List<EventRef> refs) {
    settlements.orphans(refs);
  }

  /**
   * The poller's per-tenant round found tenants waiting on disk and no room for them: each tenant
   * in {@code keep} gives up its window events beyond that many (see {@link WindowFeed#trim}).
   */
  void onTrim(Map<String, Integer> keep) {
    feed.trim(keep);
    stats.publish();
  }

  void onCancelled(List<Long> ids) {
    feed.cancel(ids);
    stats.publish();
  }

  /** Graceful stop, step 1: no new sends. */
  void onStopDispatching() {
    dispatching = false;
  }

  /**
   * Leadership lost: gives back the outlets' credits for the events they hold, which stay fired,
   * and for the batches the firer had not answered for. Called by the thread that stopped the
   * queue, once the dispatcher and firer threads have ended (their join hands this state over).
   */
  int abandonHeld() {
    int n = settlements.abandoned();
    // Batches the firer had (or had finished, with onFired never run): whether their UPDATE
    // committed or not, their rows come back through the retry collector; their credits, now.
    for (Firer.Batch b : firerHolds) {
      for (int i = 0; i < b.events.size(); i++) {
        ledger.unassign(b.owners.get(i), b.events.get(i));
        n++;
      }
    }
    firerHolds.clear();
    return n;
  }

  /** Graceful stop, step 2: release whatever outlets still hold, without backoff. */
  void onReleaseAll(String why) {
    settlements.releaseAll(why);
  }
}
