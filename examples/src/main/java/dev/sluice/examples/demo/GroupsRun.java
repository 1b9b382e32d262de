package dev.sluice.examples.demo;

import dev.sluice.db.schedule.CatchUp;
import dev.sluice.db.schedule.Schedule;
import dev.sluice.db.store.JdbcScheduleStore;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code sluice demo --groups}: event groups, deduplication and a recurring event, on one shard led
 * by manager processes that the chaos of {@code --chaos} kills ({@link Chaos}: kill -9 of the
 * leader, the server read-only for a while, the database restarted, more kills), while {@link
 * GroupProducer} writes groups, {@link GroupReceivers} handle them (failing, nacking, one of each
 * pair killed) and a schedule inserts an event every second. {@link GroupReport} then checks it all
 * and prints the summary line.
 */
final class GroupsRun {
  static final String TICKS = "tick_events";
  static final String SCHEDULE = "demo-tick";
  static final Duration EVERY = Duration.ofSeconds(1);

  /** Every queue of the run but the recurring event's. */
  private static final List<String> GROUP_QUEUES =
      List.of(
          GroupProducer.QUEUE_A,
          GroupProducer.QUEUE_B,
          GroupProducer.DONE,
          GroupProducer.FAIL_FAST);

  private final PrintWriter out;
  private final PrintWriter err;
  private final int children;
  private final int maxGroup;
  private final int rate;
  private final long seed;
  private final int managers;
  private final Duration chaosInterval;
  private final int timeoutSeconds;

  GroupsRun(
      PrintWriter out,
      PrintWriter err,
      int children,
      int maxGroup,
      int rate,
      long seed,
      int managers,
      Duration chaosInterval,
      int timeoutSeconds) {
    this.out = out;
    this.err = err;
    this.children = children;
    this.maxGroup = maxGroup;
    this.rate = rate;
    this.seed = seed;
    this.managers = managers;
    this.chaosInterval = chaosInterval;
    this.timeoutSeconds = timeoutSeconds;
  }

  /** Runs it all; prints the summary line last on {@code out}; returns the exit code. */
  int call() throws Exception {
    long startNs = System.nanoTime();
    GroupLedger ledger = new GroupLedger();
    GroupReport report;
    LeaseWatch watch;
    GroupReceivers receivers;
    err.println("demo: starting an embedded MariaDB (the first run unpacks it)...");
    err.flush();
    try (DemoDatabase db = DemoDatabase.start(1, false, true)) {
      DemoDatabase.Shard shard = db.shards().get(0);
      JdbcScheduleStore schedules = new JdbcScheduleStore(shard.pool());
      schedules.create(
          Schedule.create(
              SCHEDULE, TICKS, null, EVERY, "UTC", Map.of("source", SCHEDULE), CatchUp.ALL));
      Path logs = Files.createTempDirectory("sluice-demo-");
      long tickUntilNs;
      try (DemoManagers procs = new DemoManagers(db.shards(), managers, logs)) {
        err.printf(
            "demo: MariaDB on port %d; starting %d manager processes (configs and logs in %s)...%n",
            db.port(), managers, logs);
        err.flush();
        procs.startAll();
        watch = new LeaseWatch(db, procs::alive).start();
        if (!watch.awaitSpread(1, 30_000)) {
          err.println("demo: no manager took the shard's lease within 30 s; going on anyway");
        }
        watch.baseline();
        err.printf(
            "demo: groups of 0-%d children over %s and %s, completions in %s (wait_all) and %s"
                + " (fail_fast); %d children at %d/s (seed %d); schedule %s every %d ms into %s;"
                + " leader %s; chaos every %.1f s%n",
            maxGroup,
            GroupProducer.QUEUE_A,
            GroupProducer.QUEUE_B,
            GroupProducer.DONE,
            GroupProducer.FAIL_FAST,
            children,
            rate,
            seed,
            SCHEDULE,
            EVERY.toMillis(),
            TICKS,
            watch.leaders(),
            chaosInterval.toMillis() / 1000.0);
        err.flush();
        Map<String, Canceller> cancellers = new LinkedHashMap<>();
        for (String q : GroupProducer.CHILD_QUEUES) {
          cancellers.put(q, new Canceller(procs.targets(), q));
        }
        receivers = new GroupReceivers(procs.targets(), shard);
        try {
          receivers.start();
          GroupProducer producer =
              new GroupProducer(shard, cancellers, ledger, children, maxGroup, rate, seed);
          GroupReceivers rs = receivers;
          try (Progress progress =
              new Progress(
                      out,
                      () ->
                          String.format(
                              "groups=%d sealed=%d children=%d handled=%d completions=%d"
                                  + " duplicates_inserted=%d ticks=%d in_flight=%d receivers=%d"
                                  + " leaders=%s",
                              ledger.groupCount(),
                              ledger.sealedCount(),
                              ledger.childrenCommitted(),
                              rs.handledChildren().size(),
                              rs.completionsHandled(),
                              ledger.duplicatesInserted(),
                              rs.ticks(),
                              rs.inFlight(),
                              rs.liveCount(),
                              watch.leaders()))
                  .start()) {
            try {
              produce(db, procs, watch, progress, producer, receivers);
              awaitFinished(shard, GROUP_QUEUES, progress);
              // The schedule ran all along; it stops once its last occurrences are surely in.
              Thread.sleep(1500);
              tickUntilNs = schedules.nowNs() - 500_000_000L;
              schedules.pause(SCHEDULE);
              progress.note("schedule " + SCHEDULE + " paused");
              awaitFinished(shard, List.of(TICKS), progress);
            } finally {
              watch.close();
            }
          }
          receivers.awaitAllStreams(Duration.ofSeconds(10));
        } finally {
          receivers.close();
          cancellers.values().forEach(Canceller::close);
        }
      } // managers stop here
      report = GroupReport.compute(ledger, receivers, shard, EVERY.toNanos(), tickUntilNs);
    } // the database stops last
    err.printf(
        "demo: %d groups (%d sealed in a later transaction), %d children (%d acked, %d dead, %d"
            + " cancelled; %d cancels refused or unanswered); handlers ran %d times for children,"
            + " %d for completions (%d committed, %d stale acks, %d database errors), %d failures"
            + " on purpose; %d ticks handled of %d occurrences; %d transactions retried (%d inserts"
            + " found their key taken by a committed earlier attempt); %d failovers, longest %d ms;"
            + " %d completions carried wrong counts, %d duplicates another event's id; took %.1f"
            + " s%n",
        ledger.groupCount(),
        ledger.groups().values().stream().filter(g -> g.sealedLater).count(),
        ledger.childrenCommitted(),
        report.childrenAcked,
        report.childrenDead,
        report.childrenCancelled,
        ledger.cancelsRefused(),
        receivers.childDeliveries(),
        receivers.completionDeliveries(),
        receivers.completionsHandled(),
        receivers.staleCompletionAcks(),
        receivers.completionErrors(),
        receivers.failures(),
        receivers.ticks(),
        report.occurrences,
        ledger.retries(),
        ledger.retryDuplicates(),
        watch.failovers(),
        watch.maxGapMs(),
        report.countsWrong,
        report.wrongIds,
        (System.nanoTime() - startNs) / 1e9);
    report.printProblems(err);
    out.println(report.summaryLine());
    out.flush();
    return report.passed() ? 0 : 1;
  }

  /** Produces while chaos runs; kills a receiver of each pair half way. */
  private void produce(
      DemoDatabase db,
      DemoManagers procs,
      LeaseWatch watch,
      Progress progress,
      GroupProducer producer,
      GroupReceivers receivers)
      throws Exception {
    AtomicInteger made = new AtomicInteger();
    ExecutorService threads =
        Executors.newFixedThreadPool(
            2, r -> new Thread(r, made.getAndIncrement() == 0 ? "demo-producer" : "demo-chaos"));
    try {
      Future<?> produced = threads.submit(producer);
      Chaos chaos = new Chaos(procs, db, watch, progress, chaosInterval, produced::isDone);
      Future<?> chaotic = threads.submit(chaos);
      while (producer.written() < children / 2 && !produced.isDone()) {
        Thread.sleep(10);
      }
      progress.note("killing one receiver of each queue (abort: no more acks from them)");
      receivers.killAndReplace(Duration.ofSeconds(1));
      progress.note("their replacements subscribed");
      try {
        produced.get();
      } catch (ExecutionException e) {
        throw new IllegalStateException("the producer failed: " + e.getCause(), e.getCause());
      }
      chaotic.get();
      if (chaos.failure() != null) {
        err.println("demo: a chaos step failed: " + chaos.failure());
      }
    } finally {
      threads.shutdownNow();
    }
    for (DemoManagers.Manager m : procs.all()) {
      if (!m.alive()) {
        progress.note("starting " + m.id + " again (it was down)");
        procs.restart(m);
      }
    }
    if (!watch.awaitAllLed(30_000)) {
      err.println("demo: the shard still has no leader 30 s after the last chaos step");
    }
  }

  /** Waits until no event of {@code queues} is pending or fired, or the timeout. */
  private void awaitFinished(DemoDatabase.Shard shard, List<String> queues, Progress progress)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    long unfinished = -1;
    while (true) {
      try {
        unfinished = unfinished(shard, queues);
        if (unfinished == 0) {
          return;
        }
      } catch (SQLException e) {
        // The database may still be coming back from a restart: ask again.
      }
      if (System.nanoTime() > deadline) {
        progress.note(
            String.format(
                "gave up after %d s with %s events of %s still pending or fired",
                timeoutSeconds, unfinished < 0 ? "an unknown number of" : unfinished, queues));
        return;
      }
      Thread.sleep(200);
    }
  }

  private static long unfinished(DemoDatabase.Shard shard, List<String> queues)
      throws SQLException {
    long n = 0;
    try (Connection c = shard.pool().getConnection();
        Statement st = c.createStatement()) {
      for (String q : queues) {
        try (ResultSet rs =
            st.executeQuery("SELECT COUNT(*) FROM `" + q + "` WHERE state IN (0, 1)")) {
          rs.next();
          n += rs.getLong(1);
        }
      }
    }
    return n;
  }
}
