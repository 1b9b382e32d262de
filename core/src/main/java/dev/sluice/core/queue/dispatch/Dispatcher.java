package dev.sluice.core.queue.dispatch;

import dev.sluice.core.fairness.RateLimit;
import dev.sluice.core.fairness.TenantCredits;
import dev.sluice.core.fairness.TenantStats;
import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.loop.LoopRunner;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.context.QueueMetrics;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Acked;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Alter;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Attach;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Cancelled;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Committed;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Detach;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Extended;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Fired;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Nacked;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Orphans;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Polled;
import dev.sluice.core.queue.dispatch.DispatcherCommand.ReleaseAll;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Released;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Settled;
import dev.sluice.core.queue.dispatch.DispatcherCommand.StopSending;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Trim;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.QueueOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
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
 * (outlets, poller, firer, ack batcher, the queue's manager) never touch that state: they post
 * {@link DispatcherCommand}s to the {@link Inbox}, which this thread applies in order between
 * dispatch rounds ({@link #handle}). It makes no database call: the batched fire UPDATE runs on the
 * firer's threads, acks and releases on the ack batcher's, so that neither holds up dispatch. It
 * knows those workers only through their {@link Ports}: it never calls into them otherwise.
 *
 * <h2>A dispatch round</h2>
 *
 * Take up to {@link #MAX_BATCH} due events (tenants in turn, within the queue's {@code max_qps}:
 * {@link RateLimit}; each tenant within its in-flight cap and the reserve: {@link TenantCredits}),
 * give each to the outlet with the most free credits in its tenant's shuffle shard ({@link
 * ReceiverPool}), reserving the credit, and hand them to the firer, which fires them all with one
 * compare-and-set UPDATE per epoch (pending → fired, epoch + 1, time_next = ack deadline). Up to
 * {@link #MAX_FIRING_BATCHES} batches are being fired at once; while one is in the database the
 * next is prepared. Only when a batch's UPDATE has applied ({@link FiringBatches}) are its events
 * in flight and sent. An event whose CAS fails (acked, cancelled or fired elsewhere meanwhile) is
 * dropped silently. Every failed attempt goes back through the {@code RetryPolicy}.
 */
public final class Dispatcher implements Runnable {
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

  private final WindowFeed feed;
  private final CreditLedger ledger;
  private final PublishedStats stats;
  private final Settlements settlements;
  private final FiringBatches firing;
  private final Inbox inbox;
  private final Ports ports;

  // --- owned by the dispatcher thread; the options changed in place by Alter
  private RateLimit rate;
  private long pausedUntilNs;
  private boolean dispatching = true;

  private volatile boolean running = true;
  private volatile boolean paused;

  /**
   * The workers' ends the dispatcher hands work to, each safe from any thread: the firer's queue of
   * batches to fire, the ack batcher's queue of changes to write, and the poller's wake-up (the
   * window drained while the last poll came back full), and where an ordered queue's freed keys go
   * ({@code KeyTurns.freed}).
   */
  public record Ports(
      Consumer<FireBatch> fire,
      Consumer<Completion> write,
      Runnable wakePoller,
      Consumer<Object> keyFreed) {

    /** For an unordered queue (and tests): no key is ever freed. */
    public Ports(Consumer<FireBatch> fire, Consumer<Completion> write, Runnable wakePoller) {
      this(fire, write, wakePoller, k -> {});
    }
  }

  public Dispatcher(QueueContext ctx, Inbox inbox, Ports ports) {
    this(ctx, 0, inbox, ports);
  }

  public Dispatcher(QueueContext ctx, long forgetDelayNs, Inbox inbox, Ports ports) {
    this.ctx = ctx;
    this.inbox = inbox;
    this.ports = ports;
    this.feed = new WindowFeed(ctx, table, ports.keyFreed());
    this.ledger =
        new CreditLedger(ctx, forgetDelayNs, t -> feed.window().held(t) > 0, table::count);
    table.alsoHolds(ledger.keys()::holds);
    this.stats = new PublishedStats(table, ledger, feed, ctx.clock().ticker());
    this.settlements = new Settlements(ctx, table, ledger, feed, ports.write());
    this.firing = new FiringBatches(ctx, table, ledger, feed, settlements, stats, ports.fire());
    applyOptions(ctx.options());
  }

  private void applyOptions(QueueOptions o) {
    ledger.maxConcurrency(o.maxConcurrency());
    if (rate == null || rate.perSecond() != o.maxQps()) {
      this.rate = new RateLimit(o.maxQps());
    }
  }

  // ------------------------------------------------------------------ any thread

  public void wake() {
    inbox.wake();
  }

  public void stop() {
    running = false;
    wake();
  }

  /** Paused: nothing new is fired; acks, nacks and timeouts still apply. */
  public void setPaused(boolean p) {
    paused = p;
    wake();
  }

  public boolean paused() {
    return paused;
  }

  /** Where commands for this dispatcher go. */
  public Inbox inbox() {
    return inbox;
  }

  /** Registers the window's and in-flight gauges: {@link PublishedStats#gauges}. */
  public void gauges(QueueMetrics m) {
    stats.gauges(m);
  }

  /** The window as the poller sees and feeds it. */
  public WindowView feed() {
    return feed;
  }

  public List<TenantStats> tenants() {
    return stats.tenants();
  }

  public List<ReceiverStats> receivers() {
    return stats.receivers();
  }

  public int cachedCount() {
    return feed.cachedCount();
  }

  long cachedBytes() {
    return feed.cachedBytes();
  }

  public int inFlightCount() {
    return stats.inFlightCount();
  }

  public int receiverCount() {
    return stats.receiverCount();
  }

  // ------------------------------------------------------------------ the loop

  @Override
  public void run() {
    inbox.ownedBy(Thread.currentThread());
    LoopRunner runner = new LoopRunner(ctx.faults(), FaultHook.DISPATCHER);
    while (running) {
      try {
        FaultHook.check(FaultHook.DISPATCHER, ctx.queue());
        runInbox();
        long now = ctx.clock().nowNs();
        settlements.expire(now);
        ledger.forgetDeparted(ctx.clock().monoNs());
        table.unpark(now).forEach(feed::keep);
        if (ledger.keys().active()) {
          keyCensus();
          ledger.keys().takeFreed().forEach(feed::keep);
        }
        feed.window().promoteDue(now);
        stats.publish();
        if (dispatching
            && !paused
            && now >= pausedUntilNs
            && table.firingBatches() < MAX_FIRING_BATCHES
            && feed.window().hasReady()
            && ledger.freeSlots() > 0
            && rate.available(ctx.clock().monoNs()) > 0
            && fireRound(now)) {
          runner.ok();
          continue;
        }
        if (feed.pollerMayRead()) {
          ports.wakePoller().run();
        }
        inbox.sleep(this, waitNs(now));
        runner.ok();
      } catch (Throwable t) { // an Error too: this thread owns the queue's state; it must go on
        // Firing pauses (backing off); the inbox is still served.
        pausedUntilNs = ctx.clock().nowNs() + runner.failed(t);
      }
    }
    runInbox();
    stats.publish();
  }

  /** key_max_in_flight: counts a previous leader's fired rows per key, when due (see KeyLimits). */
  private void keyCensus() {
    RuntimeException e = ledger.keys().census(ctx.dispatch(), ctx.clock().monoNs());
    if (e != null) {
      ctx.metrics().dbErrors.increment();
      log.warn(
          "{}: counting the fired rows per key (key_max_in_flight) failed, retrying: {}",
          ctx.where(),
          e.toString());
    }
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
      long untilToken = rate.waitNs(ctx.clock().monoNs());
      if (untilToken > 0) {
        wait = Math.min(wait, untilToken);
      }
    }
    if (feed.window().hasReady()) {
      wait = Math.min(wait, ledger.rateWaitNs()); // a tenant passed over for its rate
    }
    return wait;
  }

  /** Applies what other threads posted; the dispatcher's loop does this, tests may drive it. */
  public void runInbox() {
    inbox.runAll(this::handle);
  }

  /** Applies one command (dispatcher thread): see {@link DispatcherCommand} for what each means. */
  void handle(DispatcherCommand command) {
    if (command instanceof Polled p) {
      feed.onPolled(p, ctx.clock().nowNs());
      stats.publish();
    } else if (command instanceof Fired f) {
      if (!firing.returned(f.batch(), dispatching)) {
        pausedUntilNs = ctx.clock().nowNs() + ERROR_PAUSE_NS;
      }
    } else if (command instanceof Settled s) {
      settlements.settled(s.done(), s.outcomes());
      stats.publish();
    } else if (command instanceof Orphans o) {
      settlements.orphans(o.refs());
    } else if (command instanceof Trim t) {
      feed.trim(t.keep());
      stats.publish();
    } else if (command instanceof Attach a) {
      ledger.attach(a.outlet());
      stats.outletsChanged();
    } else if (command instanceof Detach d) {
      if (ledger.detach(d.outlet(), ctx.clock().monoNs())) {
        settlements.detached(d.outlet(), d.why());
        stats.outletsChanged();
      }
    } else if (command instanceof Acked a) {
      settlements.acked(a.from(), a.refs());
    } else if (command instanceof Committed c) {
      settlements.committed(c.from(), c.refs());
      stats.publish();
    } else if (command instanceof Nacked n) {
      settlements.nacked(n.from(), n.nacks());
    } else if (command instanceof Released r) {
      settlements.released(r.from(), r.refs(), r.why());
    } else if (command instanceof Extended x) {
      x.deadlines().forEach((ref, d) -> table.extend(ref, d, x.maxHoldNs()));
    } else if (command instanceof Cancelled c) {
      feed.cancel(c.ids());
      stats.publish();
    } else if (command instanceof Alter a) {
      applyOptions(a.options());
      log.info("{}: options applied in place: {}", ctx.where(), a.options().asMap());
    } else if (command instanceof StopSending) {
      dispatching = false;
    } else if (command instanceof ReleaseAll r) {
      settlements.releaseAll(r.why());
    } else {
      throw new IllegalArgumentException(ctx.where() + ": unknown command " + command);
    }
  }

  /**
   * Takes a batch of due events for free outlets and hands it to the firer; false if none
   * (dispatcher thread; tests drive it).
   */
  boolean fireRound(long now) {
    long mono = ctx.clock().monoNs();
    int budget = Math.min(MAX_BATCH, Math.min(ledger.freeSlots(), rate.available(mono)));
    ledger.startRound();
    List<CachedEvent> events = new ArrayList<>(budget);
    List<AttachedOutlet> owners = new ArrayList<>(budget);
    while (events.size() < budget) {
      CachedEvent e = feed.window().takeReady(ledger::tenantCanTake, ledger::eventCanTake);
      if (e == null) {
        break;
      }
      if (ledger.keys().active() && !ledger.keys().mayFire(e)) {
        ledger.keys().setAside(e); // its key is at key_max_in_flight: it waits for one to leave
        continue;
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
    firing.handOut(new FireBatch(events, owners, now));
    stats.inFlightChanged();
    return true;
  }

  /**
   * Leadership lost: gives back the outlets' credits for the events they hold, which stay fired,
   * and for the batches the firer had not answered for. Called by the thread that stopped the
   * queue, once the dispatcher and firer threads have ended (their join hands this state over).
   */
  public int abandonHeld() {
    // And the batches the firer had (or had finished, their Fired never handled).
    return settlements.abandoned() + firing.abandon();
  }
}
