package dev.sluice.core.groups;

import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.core.loop.LoopThread;
import dev.sluice.core.loop.ShardGate;
import dev.sluice.core.loop.Ticker;
import dev.sluice.core.loop.Waiter;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.FencedOffException;
import dev.sluice.db.store.GroupStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completes the event groups of one led shard (README, "Event groups"): a group whose children are
 * all acked, dead or cancelled (or, {@code fail_fast}, one of which is dead) gets its counts and
 * its completion event released, exactly once ({@link GroupStore#complete}).
 *
 * <p>What it checks: the groups of the children its queues report settled ({@link
 * #childrenSettled}, by key, for the events a queue held: its acks and deaths, the receivers'
 * transactional acks; {@link #settled}, by id, read from the table: events it did not hold,
 * cancels) and the groups just sealed ({@link #sealed}), at once; and every {@link #SWEEP} the next
 * {@link #SWEEP_LIMIT} sealed groups, oldest first, for what no report covered (a child cancelled
 * by hand, an ack written by another manager, a leader killed between a child's ack and the
 * completion). Each check is an existence probe per grouped table on its ({@code group_key}, {@code
 * state}) index.
 *
 * <p>Thread: its own, {@code sluice-<shard>-groups}, one per leadership term ({@code TermWorkers}):
 * started when the term begins, before its queues, stopped at the step-down (or when the fence
 * refuses a write, which ends it). The reports are queued from any thread and read only by it. Its
 * loop is a {@link LoopThread}: a pass that fails is counted in {@code
 * sluice_loop_errors_total{loop="groups"}}, logged, and retried after the shard's backoff; between
 * passes it waits on the shard's {@link Ticker}: at least {@link #GAP} from the start of one pass
 * to the next, at most {@link #TICK} when nothing is reported.
 */
public final class GroupCloser implements Groups {
  private static final Logger log = LoggerFactory.getLogger(GroupCloser.class);

  /** The longest pause between passes when nothing is reported. */
  static final Duration TICK = Duration.ofMillis(200);

  /** The shortest time between the starts of two passes. */
  static final Duration GAP = Duration.ofMillis(20);

  /** How often all sealed groups are checked. */
  static final Duration SWEEP = Duration.ofSeconds(2);

  /** How often completed groups' rows are purged. */
  static final Duration PURGE = Duration.ofMinutes(1);

  /** How often the open-groups gauge is read. */
  static final Duration COUNT = Duration.ofSeconds(10);

  /**
   * Groups checked per sweep, at most: a sweep checks the next so many sealed groups, oldest first,
   * from where the last one stopped (all of them every {@link #SWEEP} up to this many open).
   */
  static final int SWEEP_LIMIT = 1000;

  private final String shard;
  private final GroupStore store;
  private final ShardGate gate;
  private final LongSupplier nowNs;
  private final Ticker ticker;
  private final Supplier<Map<String, QueueTable>> tables;
  private final Consumer<String> wakeQueue;

  private final ConcurrentLinkedQueue<Report> reports = new ConcurrentLinkedQueue<>();

  /** Woken by a report (and by a stop): the loop's wait between passes ends. */
  private final Waiter reported;

  private final LoopThread loop;

  private final Counter completed;
  private final Counter sealedCount;

  /** The open-groups gauge's value: shared by the shard's terms (a gauge registers once). */
  private final AtomicLong open;

  private long lastSweep = Long.MIN_VALUE / 2;

  /** Where the next sweep starts: after this group (null: from the oldest). */
  private GroupStore.SweepMark sweptTo;

  private long lastPurge = Long.MIN_VALUE / 2;
  private long lastCount = Long.MIN_VALUE / 2;

  /** Children of a table that settled (their ids), or groups sealed or settled (their keys). */
  private record Report(QueueTable table, Collection<Long> ids, Collection<String> keys) {}

  /**
   * @param store the term's group store: its writes are fenced by the term's lease token
   * @param gate the term's gate: closed at the step-down, after which nothing is written
   * @param tables the shard's served queue tables, by name
   * @param wakeQueue wakes the poller of a queue, by name, if this process serves it
   * @param faults the shard's loop faults: where failed passes are counted
   * @param ticker the shard's monotonic clock, which paces the passes and the sweeps
   */
  public GroupCloser(
      String shard,
      GroupStore store,
      ShardGate gate,
      LongSupplier nowNs,
      Supplier<Map<String, QueueTable>> tables,
      Consumer<String> wakeQueue,
      MeterRegistry registry,
      AtomicLong open,
      LoopFaults faults,
      Ticker ticker) {
    this.ticker = ticker;
    this.reported = new Waiter(ticker);
    this.loop = new LoopThread("sluice-" + shard + "-groups", FaultHook.GROUPS, faults, ticker);
    this.shard = shard;
    this.store = store;
    this.gate = gate;
    this.nowNs = nowNs;
    this.tables = tables;
    this.wakeQueue = wakeQueue;
    this.open = open;
    this.completed =
        Counter.builder("sluice_groups_completed")
            .description("Event groups completed by this manager as leader")
            .tag("shard", shard)
            .register(registry);
    this.sealedCount =
        Counter.builder("sluice_groups_sealed")
            .description("Event groups sealed by this manager as leader (completion event read)")
            .tag("shard", shard)
            .register(registry);
    Gauge.builder("sluice_groups_open", open, AtomicLong::get)
        .description("Event groups sealed and waiting for their children (read every 10 s)")
        .tag("shard", shard)
        .strongReference(true)
        .register(registry);
  }

  // ---------------------------------------------------------------- Groups (any thread)

  @Override
  public void settled(QueueTable table, Collection<Long> ids) {
    if (table.hasGroupKey() && !ids.isEmpty()) {
      reports.add(new Report(table, List.copyOf(ids), List.of()));
      wake();
    }
  }

  @Override
  public void childrenSettled(Collection<String> keys) {
    if (!keys.isEmpty()) {
      reports.add(new Report(null, List.of(), List.copyOf(keys)));
      wake();
    }
  }

  @Override
  public void sealed(String key) {
    sealedCount.increment();
    reports.add(new Report(null, List.of(), List.of(key)));
    wake();
  }

  @Override
  public GroupStore store() {
    return store;
  }

  // ---------------------------------------------------------------- life

  /**
   * Starts the closer's thread. A thread that dies (not stopped) is a fault of the shard ({@link
   * #fault}): the lease keeper gives the lease up.
   */
  public void start() {
    loop.start(() -> loop.run(gate::open, this::cycle));
  }

  /** No lock, no database call: the thread ends after its current pass. */
  public void stop() {
    loop.stop();
    reported.wake();
  }

  /** Waits at most {@code ms} for the thread to end (never under the shard's lock). */
  public boolean join(long ms) {
    return loop.join(ms);
  }

  private void wake() {
    reported.wake();
  }

  /** Why the thread died (not stopped), or null: a worker fault of the shard. */
  public String fault() {
    Throwable e = loop.died();
    return e == null ? null : "the event groups thread of shard " + shard + " died: " + e;
  }

  /** One turn of the loop: a pass, then the wait for the next (the fence's refusal ends it). */
  private void cycle() throws InterruptedException {
    FaultHook.check(FaultHook.GROUPS, "");
    long started = ticker.nanos();
    try {
      pass();
    } catch (FencedOffException e) {
      log.info("shard {}: event groups stop: {}", shard, e.getMessage());
      loop.stop();
      return;
    }
    // Reports that come while a pass runs, or within GAP of its start, wait for the next one
    // together: under a stream of acks one read of keys per GAP, not one per ack batch.
    loop.pause(GAP.toNanos() - (ticker.nanos() - started));
    if (loop.running()) {
      reported.await(TICK.toNanos());
    }
  }

  /** One pass (its thread; tests drive it). */
  void pass() {
    long mono = ticker.nanos();
    Set<String> keys = reportedKeys();
    if (!keys.isEmpty()) {
      completeAll(store.completable(keys));
    }
    if (mono - lastSweep >= SWEEP.toNanos()) {
      lastSweep = mono;
      GroupStore.SweepPage page = store.sweep(sweptTo, SWEEP_LIMIT);
      sweptTo = page.next();
      completeAll(page.completable());
    }
    if (mono - lastCount >= COUNT.toNanos()) {
      lastCount = mono;
      open.set(store.openCount());
    }
    if (mono - lastPurge >= PURGE.toNanos()) {
      lastPurge = mono;
      purge();
    }
  }

  /** The keys of the groups reported since the last pass (the children's read by id). */
  private Set<String> reportedKeys() {
    Set<String> keys = new LinkedHashSet<>();
    Map<String, List<Long>> idsByTable = new LinkedHashMap<>();
    Map<String, QueueTable> tableByName = new LinkedHashMap<>();
    Report r;
    while ((r = reports.poll()) != null) {
      keys.addAll(r.keys());
      if (r.table() != null) {
        idsByTable.computeIfAbsent(r.table().name(), k -> new ArrayList<>()).addAll(r.ids());
        tableByName.put(r.table().name(), r.table());
      }
    }
    for (Map.Entry<String, List<Long>> e : idsByTable.entrySet()) {
      List<Long> ids = e.getValue();
      for (int at = 0; at < ids.size(); at += 1000) {
        keys.addAll(
            store.keysOf(
                tableByName.get(e.getKey()), ids.subList(at, Math.min(ids.size(), at + 1000))));
      }
    }
    return keys;
  }

  private void completeAll(List<String> keys) {
    List<GroupStore.Group> done =
        store.completeAll(keys, nowNs.getAsLong(), () -> loop.running() && gate.open());
    for (GroupStore.Group g : done) {
      String key = g.key();
      completed.increment();
      log.info(
          "shard {}: group {} completed ({} acked, {} dead, {} cancelled): completion event {} of"
              + " queue {} released",
          shard,
          key,
          g.acked(),
          g.dead(),
          g.cancelled(),
          g.completionId(),
          g.completionQueue());
      wakeQueue.accept(g.completionQueue());
    }
  }

  private void purge() {
    long now = nowNs.getAsLong();
    for (QueueTable t : tables.get().values()) {
      if (t.completesGroups()) {
        long keep = TimeUnit.NANOSECONDS.convert(t.options().purgeAfter());
        store.purgeCompleted(t, now - keep, 1000);
      }
    }
  }
}
