package dev.sluice.core.queue;

import dev.sluice.core.config.TenantLimit;
import dev.sluice.core.fairness.TenantLimits;
import dev.sluice.core.fairness.TenantStats;
import dev.sluice.core.groups.Groups;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.core.loop.ShardGate;
import dev.sluice.core.loop.Waiter;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletOutcomes;
import dev.sluice.core.queue.context.BadRows;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.context.QueueMetrics;
import dev.sluice.core.queue.dispatch.AttachedOutlets;
import dev.sluice.core.queue.dispatch.Dispatcher;
import dev.sluice.core.queue.dispatch.DispatcherCommand;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Alter;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Cancelled;
import dev.sluice.core.queue.dispatch.Inbox;
import dev.sluice.core.queue.dispatch.ReceiverStats;
import dev.sluice.core.queue.ordering.KeyTurns;
import dev.sluice.core.queue.poll.Poller;
import dev.sluice.core.queue.poll.RetryCollector;
import dev.sluice.core.queue.poll.RowNews;
import dev.sluice.core.queue.write.AckBatcher;
import dev.sluice.core.queue.write.Firer;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.StateCounts;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one queue table on one shard, and is what the shard and the outlets talk to. It wires the
 * queue's parts, each in the package of its thread, around the dispatcher's {@link Inbox}: the
 * {@link Poller} with its {@link RetryCollector} ({@code core.queue.poll}), the {@link Dispatcher}
 * ({@code core.queue.dispatch}), the {@link Firer} and the {@link AckBatcher} ({@code
 * core.queue.write}), an ordered queue's {@link KeyTurns} ({@code core.queue.ordering}), and the
 * {@link Purger}, all sharing one {@link QueueContext} ({@code core.queue.context}). The workers
 * post {@code DispatcherCommand}s to the inbox; the dispatcher hands work back through its {@link
 * Dispatcher.Ports}. None of the parts knows this class. How it stops is {@link QueueShutdown}'s.
 *
 * <p>Threads: {@code sluice-<shard>-<queue>-dispatcher}, {@code -poller}, {@code -firer-1}, {@code
 * -firer-2} and {@code -acks}, plus the purger on the shard's maintenance executor. Public methods
 * are safe from any thread: they hand work to the dispatcher or go to the store directly (cancel,
 * stats).
 */
public final class QueueManager {
  private static final Logger log = LoggerFactory.getLogger(QueueManager.class);

  /** An ordered queue's holds and turns (poller thread; see {@link KeyTurns}). */
  private final KeyTurns turns;

  private final QueueContext ctx;
  private final Inbox inbox = new Inbox();
  private final Dispatcher dispatcher;
  private final AckBatcher acks;
  private final Poller poller;

  /** Wakes the poller before its pause ends. */
  private final Waiter pollerWake;

  /** What the shard's binlog follower tells the poller. */
  private final RowNews news;

  private final Firer firer;
  private final Purger purger;
  private final ScheduledExecutorService maintenance;

  private final AttachedOutlets streams;

  private final QueueThreads threads;

  /** How the queue stops: gracefully, or at once when leadership is lost. */
  private final QueueShutdown shutdown;

  private boolean started;
  private boolean stopped;

  public QueueManager(
      String shard,
      QueueTable table,
      EventStore store,
      DbClock clock,
      MeterRegistry registry,
      ScheduledExecutorService maintenance,
      Duration forgetDelay,
      List<TenantLimit> tenantOverrides) {
    this.ctx =
        new QueueContext(
            shard,
            table,
            store,
            clock,
            new QueueMetrics(registry, shard, table.name()),
            TenantLimits.of(table.options(), table.name(), tenantOverrides),
            new LoopFaults(registry, shard, table.name(), clock.ticker()));
    this.maintenance = maintenance;
    store.onBadRow(new BadRows(ctx));
    this.acks = new AckBatcher(ctx, inbox);
    this.firer = new Firer(ctx, inbox);
    Waiter pollerWake = new Waiter(ctx.clock().ticker());
    this.pollerWake = pollerWake;
    this.turns = new KeyTurns(ctx, pollerWake);
    this.dispatcher =
        new Dispatcher(
            ctx,
            forgetDelay.toNanos(),
            inbox,
            new Dispatcher.Ports(firer::submit, acks::submit, pollerWake::wake, turns::freed));
    this.news = new RowNews(pollerWake);
    this.poller =
        new Poller(
            ctx, dispatcher.feed(), inbox, pollerWake, new RetryCollector(ctx, inbox), turns, news);
    this.purger = new Purger(ctx);
    this.streams = new AttachedOutlets(ctx, inbox);
    this.threads = new QueueThreads(ctx);
    this.shutdown =
        new QueueShutdown(ctx, inbox, dispatcher, poller, firer, acks, purger, streams, threads);
    dispatcher.gauges(ctx.metrics());
    turns.gauges(ctx.metrics());
  }

  /** This queue's meters (counters and latency timers). */
  public QueueMetrics metrics() {
    return ctx.metrics();
  }

  public String queue() {
    return ctx.queue();
  }

  /**
   * Who hears of this queue's worker faults (an {@code Error} a loop survived, a worker thread that
   * died); set before {@link #start}.
   */
  public void onFault(LoopFaults.Listener listener) {
    ctx.faults().listen(listener);
  }

  /** The shard's event groups (its leadership term's closer); before {@link #start}. */
  public void groups(Groups g) {
    ctx.groups(g);
  }

  /** What the shard's binlog follower tells this queue's poller (see {@link RowNews}). */
  public RowNews rowNews() {
    return news;
  }

  /**
   * The shard's gate for this leadership term (see {@link ShardGate}); set before {@link #start}.
   */
  public void gate(ShardGate g) {
    firer.gate(g);
  }

  /** Whether every worker thread is alive (false before start and after stop). */
  public synchronized boolean workersAlive() {
    return started && !stopped && threads.allAlive();
  }

  public String shard() {
    return ctx.shard();
  }

  public QueueTable table() {
    return ctx.table();
  }

  public synchronized void start() {
    if (started) {
      return;
    }
    started = true;
    threads.add(dispatcher, FaultHook.DISPATCHER, "dispatcher");
    threads.add(firer, FaultHook.FIRER, "firer-1");
    threads.add(firer, FaultHook.FIRER, "firer-2");
    threads.add(acks, FaultHook.ACKS, "acks");
    threads.add(poller, FaultHook.POLLER, "poller");
    threads.start();
    purger.start(maintenance);
    log.info("{}: serving (options: {})", ctx.where(), ctx.options().asMap());
    if (ctx.tenantLimits().hasOverrides()) {
      log.info("{}: per-tenant limits from config: {}", ctx.where(), ctx.tenantLimits());
    }
  }

  // ---------------------------------------------------------------- changes

  /**
   * Follows a migration of the table without releasing the events in flight: the new columns and
   * indexes are read by later polls and fires (through {@code store}), and the options applied in
   * place (all but {@link QueueOptions#RESTART_OPTIONS}) take their new values (events in flight
   * keep their deadline). Returns null when applied, or why the change needs a restart instead
   * (then nothing was changed).
   */
  public synchronized String update(QueueTable next, EventStore store) {
    if (stopped) {
      return "the queue is stopping";
    }
    if (!next.name().equals(ctx.queue())) {
      return "the table name changed";
    }
    List<String> changed = next.options().changedFrom(ctx.options());
    List<String> needRestart =
        changed.stream().filter(QueueOptions.RESTART_OPTIONS::contains).toList();
    if (!needRestart.isEmpty()) {
      return "option(s) "
          + String.join(", ", needRestart)
          + " changed, and the window and tenant ledgers are built from them";
    }
    ctx.update(next, store);
    if (!changed.isEmpty()) {
      poller.setInterval(next.options().pollInterval());
      inbox.post(new Alter(next.options()));
    }
    log.info(
        "{}: table altered; applied in place without releasing events in flight ({})",
        ctx.where(),
        changed.isEmpty() ? "columns or indexes" : "options " + String.join(", ", changed));
    return null;
  }

  /**
   * A graceful hand-over: the shard's lease was given up while this queue drains, so its writes
   * from here on (the acks of what receivers still hold, the releases at shutdown, each a CAS on
   * the epoch the receiver was given) go through {@code unfenced}, not the leader's fenced store,
   * which the next leader's take refuses. Nothing is fired any more (the shard's gate is closed).
   */
  public void handOver(EventStore unfenced) {
    ctx.update(ctx.table(), unfenced);
  }

  // ---------------------------------------------------------------- receivers

  /** Starts sending this shard's events to an outlet (sharing its credits with other shards). */
  public void attach(Outlet outlet) {
    streams.attach(outlet);
  }

  /** Stops sending to an outlet; what it holds from this shard is released at once. */
  public void detach(Outlet outlet, String why) {
    streams.detach(outlet, why);
  }

  /** What outlets report back, queued for the dispatcher thread. */
  public OutletOutcomes outcomes() {
    return streams;
  }

  /**
   * Receivers extended these attempts' deadlines (being written to the table): the dispatcher moves
   * its own timeouts, each bounded by its attempt's fire + {@code maxHoldNs}.
   */
  public void extended(Map<EventRef, Long> deadlines, long maxHoldNs) {
    inbox.post(new DispatcherCommand.Extended(deadlines, maxHoldNs));
    dispatcher.wake();
  }

  /** An outlet became writable again, or credits changed: let the dispatcher look. */
  public void wake() {
    dispatcher.wake();
  }

  /**
   * Stops new sends to every outlet of a receiver opened by {@code principal}. Returns how many
   * outlets that was here.
   */
  public int drainReceiver(String receiverId, String principal) {
    return streams.drainReceiver(receiverId, principal);
  }

  // ---------------------------------------------------------------- admin

  /** pending → cancelled, through the CAS; cancelled events leave the window at once. */
  public Map<Long, CasOutcome> cancel(Collection<Long> ids) {
    return cancel(ids, t -> true);
  }

  /** {@link #cancel(Collection)} of the events whose tenant {@code tenantAllowed} accepts. */
  public Map<Long, CasOutcome> cancel(
      Collection<Long> ids, java.util.function.Predicate<String> tenantAllowed) {
    Map<Long, CasOutcome> out = ctx.operator().cancel(ids, ctx.clock().nowNs(), tenantAllowed);
    List<Long> cancelled =
        out.entrySet().stream()
            .filter(e -> e.getValue() == CasOutcome.APPLIED)
            .map(Map.Entry::getKey)
            .toList();
    if (!cancelled.isEmpty()) {
      ctx.groups().settled(ctx.table(), cancelled);
      inbox.post(new Cancelled(cancelled));
      keysChanged();
    }
    return out;
  }

  /** Rows were released for this queue (a group completed, say): the poller reads at once. */
  public void pollSoon() {
    pollerWake.wake();
  }

  /**
   * An ordered queue's events were changed by an operator (cancelled, skipped, replayed, purged):
   * the held events whose turn that gives are released at the poller's next pass.
   */
  public void keysChanged() {
    if (ctx.options().ordered()) {
      turns.recheckSoon();
    }
  }

  /** Pauses or resumes dispatch; acks, nacks and timeouts go on while paused. */
  public void setPaused(boolean paused) {
    if (dispatcher.paused() != paused) {
      dispatcher.setPaused(paused);
      log.info("{}: {}", ctx.where(), paused ? "paused" : "resumed");
    }
  }

  public boolean paused() {
    return dispatcher.paused();
  }

  /** Per-tenant figures (window, in flight, dispatched), refreshed about twice a second. */
  public List<TenantStats> tenants() {
    return dispatcher.tenants();
  }

  /** Attached outlets with their in-flight counts, refreshed about twice a second. */
  public List<ReceiverStats> receivers() {
    return dispatcher.receivers();
  }

  /** Live figures of this manager: window, in flight, receivers. */
  public record LiveStats(int cached, int inFlight, int receivers) {}

  public LiveStats live() {
    return new LiveStats(
        dispatcher.cachedCount(), dispatcher.inFlightCount(), dispatcher.receiverCount());
  }

  /** Row counts by state, from the table: reads every row, so its cost grows with the table. */
  public StateCounts counts() {
    return ctx.maintenance().counts();
  }

  /** The due time of the earliest pending event, if any: one index seek. */
  public java.util.OptionalLong oldestPendingDueNs() {
    return ctx.maintenance().oldestPendingDueNs();
  }

  public long nowNs() {
    return ctx.clock().nowNs();
  }

  // ---------------------------------------------------------------- stop

  /**
   * Stops in order, each step bounded: no new sends; let receivers finish and ack what they hold
   * (up to half of {@code timeout}); release the rest to pending; write the last acks; close the
   * streams (receivers reconnect elsewhere); stop the threads ({@link QueueShutdown#graceful}).
   */
  public synchronized void stop(Duration timeout) {
    if (!started || stopped) {
      return;
    }
    stopped = true;
    shutdown.graceful(timeout);
  }

  /**
   * Leadership lost: stop dispatching at once, without waiting for receivers and without releasing
   * what they hold — they may still ack it, and acks apply through the CAS wherever they arrive.
   * What is never acked comes back through the new leader's retry collector. The credits those
   * events took on their outlets are given back, so a receiver may briefly hold up to twice its
   * max_in_flight when this process leads the shard again.
   *
   * <p>In two halves, so that a shard stops all its queues at once: this one tells every thread to
   * stop and waits for none (it returns whether {@link #awaitAbandoned} is to be called); the
   * second waits for them, outside any monitor.
   */
  public synchronized boolean abandon(String why) {
    if (!started || stopped) {
      return false;
    }
    stopped = true;
    shutdown.abandon(why);
    return true;
  }

  /**
   * The second half of {@link #abandon}: waits until {@code deadline} (monotonic ns) for the
   * queue's threads, then gives back the credits of what its receivers hold. The stepping-down
   * thread calls it, holding no lock; the threads list is fixed since {@link #start}.
   */
  public void awaitAbandoned(long deadline) {
    shutdown.awaitAbandoned(deadline);
  }
}
