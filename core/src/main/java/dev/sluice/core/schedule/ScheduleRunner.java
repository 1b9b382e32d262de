package dev.sluice.core.schedule;

import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.core.loop.LoopThread;
import dev.sluice.core.loop.ShardGate;
import dev.sluice.core.loop.Ticker;
import dev.sluice.db.schedule.Occurrences;
import dev.sluice.db.schedule.Recurrence;
import dev.sluice.db.schedule.Schedule;
import dev.sluice.db.store.FencedOffException;
import dev.sluice.db.store.ScheduleStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recurring events of one led shard: every {@link #TICK} it reads the shard's schedules ({@code
 * sluice_schedule}) and inserts each occurrence due within {@link #AHEAD} as an ordinary event of
 * the schedule's queue, with {@code time_next} = the occurrence's time, so the queue's dispatch,
 * fairness, retries, dead letters and channels apply to it.
 *
 * <p>Thread: its own, {@code sluice-<shard>-schedules}, one per leadership term ({@code
 * TermWorkers}): started with the term's fence and gate, stopped at the step-down (or when a write
 * of it is refused by the fence, which ends it). Everything but {@link #start}, {@link #stop},
 * {@link #join} and {@link #fault} runs on that thread. Its loop is a {@link LoopThread}: a pass
 * that fails is counted in {@code sluice_loop_errors_total{loop="schedules"}}, logged, and retried
 * after the shard's backoff; one schedule whose step fails is counted there too and logged once,
 * and the others go on.
 *
 * <p>Exactly once: each pass inserts a schedule's occurrences and moves its {@code next_ns} in one
 * transaction, a compare-and-set on the {@code next_ns} it read, conditioned on the term's fence
 * ({@link ScheduleStore#insert}). A second runner (another manager that still believes it leads)
 * finds {@code next_ns} moved and writes nothing; a deposed leader's transaction matches nothing
 * once the takeover wrote the fence (and the takeover waits for one in progress). An occurrence
 * whose transaction failed is retried at the next pass, from the same {@code next_ns}.
 *
 * <p>Missed occurrences: one due more than {@link #GRACE} ago (no leader ran then, longer than a
 * failover takes) follows the schedule's {@code catch_up}; a later one is inserted late, as due.
 */
public final class ScheduleRunner {
  private static final Logger log = LoggerFactory.getLogger(ScheduleRunner.class);

  /** How often the schedules are read. */
  static final Duration TICK = Duration.ofMillis(500);

  /** How long before its time an occurrence is inserted. */
  static final Duration AHEAD = Duration.ofSeconds(2);

  /** How late an occurrence may be and still be inserted as due (not missed). */
  static final Duration GRACE = Duration.ofMinutes(1);

  private final String shard;
  private final ScheduleStore store;
  private final Predicate<String> knownQueue;
  private final ShardGate gate;
  private final long tickNs;
  private final Counter inserted;
  private final Counter skipped;
  private final LoopFaults faults;
  private final LoopThread loop;

  /**
   * The last problem logged per schedule (this thread only): each is logged once, not each pass.
   */
  private final Map<String, String> problems = new HashMap<>();

  /**
   * @param store the term's store: its leader writes are fenced by the term's lease token
   * @param knownQueue whether a valid queue table of that name was discovered on the shard
   * @param gate the term's gate: closed at the step-down, after which nothing is written
   * @param faults the shard's loop faults: where failed passes are counted
   * @param ticker the shard's monotonic clock, which paces the passes
   */
  public ScheduleRunner(
      String shard,
      ScheduleStore store,
      Predicate<String> knownQueue,
      ShardGate gate,
      MeterRegistry registry,
      LoopFaults faults,
      Ticker ticker) {
    this(shard, store, knownQueue, gate, registry, faults, ticker, TICK);
  }

  ScheduleRunner(
      String shard,
      ScheduleStore store,
      Predicate<String> knownQueue,
      ShardGate gate,
      MeterRegistry registry,
      LoopFaults faults,
      Ticker ticker,
      Duration tick) {
    this.shard = shard;
    this.store = store;
    this.knownQueue = knownQueue;
    this.gate = gate;
    this.tickNs = Math.max(1, tick.toNanos());
    this.faults = faults;
    this.loop =
        new LoopThread("sluice-" + shard + "-schedules", FaultHook.SCHEDULES, faults, ticker);
    this.inserted =
        Counter.builder("sluice_schedule_occurrences")
            .description("Occurrences of recurring events inserted by this manager as leader")
            .tag("shard", shard)
            .register(registry);
    this.skipped =
        Counter.builder("sluice_schedule_skipped")
            .description("Missed occurrences of recurring events skipped by their catch_up policy")
            .tag("shard", shard)
            .register(registry);
  }

  /**
   * Starts the runner's thread. A thread that dies (not stopped) is a fault of the shard ({@link
   * #fault}): the lease keeper gives the lease up, and the next leader goes on from {@code
   * next_ns}.
   */
  public void start() {
    loop.start(
        () -> {
          log.info("shard {}: recurring events started", shard);
          loop.run(gate::open, this::cycle);
          log.info("shard {}: recurring events stopped", shard);
        });
  }

  /** Any thread, no lock: the runner ends after its current pass (nothing is written after it). */
  public void stop() {
    loop.stop();
  }

  /** Waits at most {@code ms} for the thread to end (never under the shard's lock). */
  public boolean join(long ms) {
    return loop.join(ms);
  }

  boolean running() {
    return loop.running();
  }

  /** Why the thread died (not stopped), or null. */
  public String fault() {
    Throwable e = loop.died();
    return e == null ? null : "the recurring events thread of shard " + shard + " died: " + e;
  }

  /** One turn of the loop: a pass, then the pause to the next (the fence's refusal ends it). */
  private void cycle() throws InterruptedException {
    FaultHook.check(FaultHook.SCHEDULES, "");
    try {
      pass();
    } catch (FencedOffException e) {
      // The store told the shard (which steps down); nothing of this pass was written.
      log.warn("shard {}: recurring events stop: {}", shard, e.getMessage());
      loop.stop();
      return;
    }
    loop.pause(tickNs);
  }

  /** One pass over the shard's schedules; package-private for tests. */
  void pass() {
    List<Schedule> all = store.list();
    long now = store.nowNs();
    Set<String> seen = new HashSet<>();
    for (Schedule s : all) {
      seen.add(s.name());
      if (s.paused() || !loop.running() || !gate.open()) {
        continue;
      }
      try {
        if (runOne(s, now)) {
          problems.remove(s.name());
        }
      } catch (FencedOffException e) {
        throw e;
      } catch (RuntimeException e) {
        faults.handled(FaultHook.SCHEDULES);
        problem(s, String.valueOf(e.getMessage()));
      }
    }
    problems.keySet().retainAll(seen);
  }

  /** One schedule's step; false when it has a problem (logged once) that keeps it waiting. */
  private boolean runOne(Schedule s, long now) {
    Recurrence r = s.recurrence();
    long aheadNs = AHEAD.toNanos();
    if (s.nextNs() == 0) {
      long first = r.first(now);
      if (!store.start(s, first)) {
        return true; // changed meanwhile: the next pass reads it again
      }
      log.info(
          "shard {}: schedule {} ({}, queue {}) started: first occurrence at {}",
          shard,
          s.name(),
          s.describe(),
          s.queue(),
          instant(first));
      s =
          new Schedule(
              s.name(),
              s.queue(),
              s.cron(),
              s.everyMs(),
              s.zone(),
              s.columnsJson(),
              s.catchUp(),
              false,
              first,
              s.lastNs(),
              s.lastId());
    }
    if (s.nextNs() > now + aheadNs) {
      return true;
    }
    if (!knownQueue.test(s.queue())) {
      problem(
          s,
          "queue "
              + s.queue()
              + " is not a queue table of this shard: no occurrence is inserted until it is");
      return false;
    }
    Map<String, Object> columns = s.columns();
    Occurrences plan = Occurrences.plan(r, s.catchUp(), s.nextNs(), now, aheadNs, GRACE.toNanos());
    List<Long> ids = store.insert(s, columns, plan);
    if (ids == null) {
      return true; // changed meanwhile (paused, resumed, deleted, advanced): read again next pass
    }
    inserted.increment(ids.size());
    if (plan.skipped()) {
      skipped.increment();
      log.warn(
          "shard {}: schedule {} (queue {}): missed occurrences from {} to {} skipped (catch_up={});"
              + " {} inserted, next at {}",
          shard,
          s.name(),
          s.queue(),
          instant(plan.skippedFrom()),
          instant(plan.skippedTo()),
          s.catchUp().sql(),
          ids.size(),
          instant(plan.next()));
    } else if (!plan.times().isEmpty() && plan.times().get(0) < now - GRACE.toNanos()) {
      // Missed: due before the grace; the rest of the insert is on time or the look-ahead.
      long missedBefore = now - GRACE.toNanos();
      long missed = plan.times().stream().filter(t -> t < missedBefore).count();
      log.info(
          "shard {}: schedule {} (queue {}): {} missed occurrence(s) inserted late (catch_up={}),"
              + " {} on time or ahead",
          shard,
          s.name(),
          s.queue(),
          missed,
          s.catchUp().sql(),
          ids.size() - missed);
    }
    return true;
  }

  /** Logs a schedule's problem once (until it changes or goes away). */
  private void problem(Schedule s, String why) {
    if (!why.equals(problems.put(s.name(), why))) {
      log.warn("shard {}: schedule {} (queue {}): {}", shard, s.name(), s.queue(), why);
    }
  }

  private static Object instant(long ns) {
    return ns == Long.MAX_VALUE ? "never" : Instant.ofEpochSecond(0, ns);
  }
}
