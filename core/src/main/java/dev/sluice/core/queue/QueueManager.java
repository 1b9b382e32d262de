package dev.sluice.core.queue;

import dev.sluice.core.config.TenantLimit;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletOutcomes;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.StateCounts;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one queue table on one shard: wires the {@link Poller}, {@link Dispatcher}, {@link Firer},
 * {@link AckBatcher}, {@link RetryCollector} and {@link Purger}, and is what the gRPC layer talks
 * to.
 *
 * <p>Threads: {@code sluice-<shard>-<queue>-dispatcher}, {@code -poller}, {@code -firer-1}, {@code
 * -firer-2} and {@code -acks}, plus the purger on the shard's maintenance executor. Public methods
 * are safe from any thread: they hand work to the dispatcher or go to the store directly (cancel,
 * stats).
 */
public final class QueueManager {
  private static final Logger log = LoggerFactory.getLogger(QueueManager.class);

  private final QueueContext ctx;
  private final Dispatcher dispatcher;
  private final AckBatcher acks;
  private final Poller poller;
  private final Firer firer;
  private final Purger purger;
  private final ScheduledExecutorService maintenance;

  /** Attached streams by stream id, for lookups by receiver id from gRPC threads. */
  private final Map<Long, AttachedOutlet> streams = new ConcurrentHashMap<>();

  private final List<Thread> threads = new ArrayList<>();
  private ScheduledFuture<?> purgeTask;
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
            new LoopFaults(registry, shard, table.name()));
    this.maintenance = maintenance;
    store.onBadRow(new BadRows(ctx));
    this.dispatcher = new Dispatcher(ctx, forgetDelay.toNanos());
    this.acks = new AckBatcher(ctx, dispatcher);
    this.poller = new Poller(ctx, dispatcher, new RetryCollector(ctx, dispatcher));
    this.purger = new Purger(ctx);
    this.firer = new Firer(ctx, dispatcher);
    dispatcher.wire(acks, poller, firer);
    QueueMetrics m = ctx.metrics();
    m.gauge("sluice.window.events", "pending events held in memory", dispatcher::cachedCount);
    m.gauge(
        "sluice.window.bytes",
        "bytes of the pending events held in memory (at most cache_bytes)",
        dispatcher::cachedBytes);
    m.gauge(
        "sluice.events.in.flight", "events fired and not yet settled", dispatcher::inFlightCount);
    m.gauge("sluice.receivers.connected", "receiver streams attached", dispatcher::receiverCount);
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

  /**
   * The shard's gate for this leadership term (see {@link ShardGate}); set before {@link #start}.
   */
  public void gate(ShardGate g) {
    firer.gate(g);
  }

  /** Whether every worker thread is alive (false before start and after stop). */
  public synchronized boolean workersAlive() {
    if (!started || stopped) {
      return false;
    }
    for (Thread t : threads) {
      if (!t.isAlive()) {
        return false;
      }
    }
    return true;
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
    String prefix = "sluice-" + ctx.shard() + "-" + ctx.queue() + "-";
    worker(dispatcher, prefix, FaultHook.DISPATCHER, "dispatcher");
    worker(firer, prefix, FaultHook.FIRER, "firer-1");
    worker(firer, prefix, FaultHook.FIRER, "firer-2");
    worker(acks, prefix, FaultHook.ACKS, "acks");
    worker(poller, prefix, FaultHook.POLLER, "poller");
    for (Thread t : threads) {
      t.start();
    }
    long purgeEvery = Math.max(1_000, Math.min(60_000, ctx.options().purgeAfter().toMillis() / 10));
    purgeTask =
        maintenance.scheduleWithFixedDelay(purger, purgeEvery, purgeEvery, TimeUnit.MILLISECONDS);
    log.info("{}: serving (options: {})", ctx.where(), ctx.options().asMap());
    if (ctx.tenantLimits().hasOverrides()) {
      log.info("{}: per-tenant limits from config: {}", ctx.where(), ctx.tenantLimits());
    }
  }

  private void worker(Runnable loop, String prefix, String loopName, String suffix) {
    Thread t = new Thread(loop, prefix + suffix);
    t.setDaemon(true);
    t.setUncaughtExceptionHandler(ctx.faults().handler(loopName));
    threads.add(t);
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
      dispatcher.post(() -> dispatcher.onOptions(next.options()));
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
    AttachedOutlet r = new AttachedOutlet(outlet, ctx.shard());
    if (streams.putIfAbsent(outlet.streamId(), r) != null) {
      return;
    }
    dispatcher.post(() -> dispatcher.onAttach(r));
    outlet.shardChanged(ctx.shard(), true);
    log.info("{}: {} attached, max_in_flight={}", ctx.where(), outlet, outlet.maxInFlight());
  }

  /** Stops sending to an outlet; what it holds from this shard is released at once. */
  public void detach(Outlet outlet, String why) {
    AttachedOutlet r = streams.remove(outlet.streamId());
    if (r != null) {
      outlet.shardChanged(ctx.shard(), false);
      dispatcher.post(() -> dispatcher.onDetach(r, why));
    }
  }

  private AttachedOutlet streamOf(Outlet from) {
    AttachedOutlet r = streams.get(from.streamId());
    // Not attached here (any more): the answer still goes back to the outlet.
    return r != null ? r : new AttachedOutlet(from, ctx.shard());
  }

  /** What outlets report back, queued for the dispatcher thread. */
  public OutletOutcomes outcomes() {
    return outcomes;
  }

  private final OutletOutcomes outcomes =
      new OutletOutcomes() {
        @Override
        public void acked(Outlet from, List<EventRef> refs) {
          AttachedOutlet r = streamOf(from);
          dispatcher.post(() -> dispatcher.onAcks(r, refs));
        }

        @Override
        public void committed(Outlet from, List<EventRef> refs) {
          AttachedOutlet r = streamOf(from);
          dispatcher.post(() -> dispatcher.onCommitted(r, refs));
        }

        @Override
        public void nacked(Outlet from, List<Nack> nacks) {
          AttachedOutlet r = streamOf(from);
          dispatcher.post(() -> dispatcher.onNacks(r, nacks));
        }

        @Override
        public void released(Outlet from, List<EventRef> refs, String why) {
          AttachedOutlet r = streamOf(from);
          dispatcher.post(() -> dispatcher.onReleased(r, refs, why));
        }
      };

  /** An outlet became writable again, or credits changed: let the dispatcher look. */
  public void wake() {
    dispatcher.wake();
  }

  /**
   * Stops new sends to every outlet of a receiver opened by {@code principal}. Returns how many
   * outlets that was here.
   */
  public int drainReceiver(String receiverId, String principal) {
    int n = 0;
    for (AttachedOutlet r : streams.values()) {
      if (r.receiverId().equals(receiverId) && r.outlet().principal().equals(principal)) {
        r.outlet().drain();
        n++;
      }
    }
    if (n > 0) {
      log.info("{}: receiver {} is shutting down; no new sends", ctx.where(), receiverId);
    }
    return n;
  }

  // ---------------------------------------------------------------- admin

  /** pending → cancelled, through the CAS; cancelled events leave the window at once. */
  public Map<Long, CasOutcome> cancel(Collection<Long> ids) {
    return cancel(ids, t -> true);
  }

  /** {@link #cancel(Collection)} of the events whose tenant {@code tenantAllowed} accepts. */
  public Map<Long, CasOutcome> cancel(
      Collection<Long> ids, java.util.function.Predicate<String> tenantAllowed) {
    Map<Long, CasOutcome> out = ctx.store().cancel(ids, ctx.clock().nowNs(), tenantAllowed);
    List<Long> cancelled = new ArrayList<>();
    out.forEach(
        (id, o) -> {
          if (o == CasOutcome.APPLIED) {
            cancelled.add(id);
          }
        });
    if (!cancelled.isEmpty()) {
      dispatcher.post(() -> dispatcher.onCancelled(cancelled));
    }
    return out;
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
    return ctx.store().counts();
  }

  /** The due time of the earliest pending event, if any: one index seek. */
  public java.util.OptionalLong oldestPendingDueNs() {
    return ctx.store().oldestPendingDueNs();
  }

  public long nowNs() {
    return ctx.clock().nowNs();
  }

  // ---------------------------------------------------------------- stop

  /**
   * Stops in order, each step bounded: no new sends; let receivers finish and ack what they hold
   * (up to half of {@code timeout}); release the rest to pending; write the last acks; close the
   * streams (receivers reconnect elsewhere); stop the threads.
   */
  public synchronized void stop(Duration timeout) {
    if (!started || stopped) {
      return;
    }
    stopped = true;
    long deadline = System.nanoTime() + timeout.toNanos();
    long drainUntil = System.nanoTime() + timeout.toNanos() / 2;
    poller.stop();
    purger.stop();
    purgeTask.cancel(false);
    dispatcher.post(dispatcher::onStopDispatching);
    while (dispatcher.inFlightCount() > 0 && System.nanoTime() < drainUntil) {
      pause(20);
    }
    if (dispatcher.inFlightCount() > 0) {
      log.info(
          "{}: releasing {} in-flight events at shutdown", ctx.where(), dispatcher.inFlightCount());
      dispatcher.post(() -> dispatcher.onReleaseAll("manager stopping"));
      while (dispatcher.inFlightCount() > 0 && System.nanoTime() < deadline) {
        pause(20);
      }
    }
    acks.stop();
    stopThreads(deadline);
  }

  /**
   * Leadership lost: stop dispatching at once, without waiting for receivers and without releasing
   * what they hold — they may still ack it, and acks apply through the CAS wherever they arrive.
   * What is never acked comes back through the new leader's retry collector. The credits those
   * events took on their outlets are given back, so a receiver may briefly hold up to twice its
   * max_in_flight when this process leads the shard again.
   */
  public synchronized void abandon(String why) {
    if (!started || stopped) {
      return;
    }
    stopped = true;
    log.warn("{}: stopping dispatch at once: {}", ctx.where(), why);
    poller.stop();
    purger.stop();
    purgeTask.cancel(false);
    dispatcher.post(dispatcher::onStopDispatching);
    acks.stop();
    stopThreads(System.nanoTime() + 2_000_000_000L);
    // The events receivers hold stay fired, for them to ack; their credits on each stream come
    // back, since this queue will never settle them. Only once no thread of ours runs: the
    // dispatcher's state is then this thread's.
    if (threads.stream().noneMatch(Thread::isAlive)) {
      int held = dispatcher.abandonHeld();
      if (held > 0) {
        log.info(
            "{}: gave back the credits of {} events its receivers hold or it was firing (they stay"
                + " fired: an ack still applies, else they come back after ack_wait)",
            ctx.where(),
            held);
      }
    } else {
      log.warn(
          "{}: a thread did not stop: the credits of held events are not given back", ctx.where());
    }
  }

  private void stopThreads(long deadline) {
    for (AttachedOutlet r : streams.values()) {
      r.outlet().shardChanged(ctx.shard(), false);
    }
    streams.clear();
    dispatcher.stop();
    firer.stop();
    for (Thread t : threads) {
      long left = Math.max(100, (deadline - System.nanoTime()) / 1_000_000);
      try {
        t.join(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (t.isAlive()) {
        log.warn("{}: thread {} did not stop in time", ctx.where(), t.getName());
      }
    }
    ctx.metrics().removeGauges();
    log.info("{}: stopped", ctx.where());
  }

  private static void pause(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
