package dev.sluice.examples.demo;

import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ManagerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
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
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Runs Sluice end to end on an embedded MariaDB and checks its promises.",
      "A producer commits orders with their events in one transaction (some rolled back, some"
          + " scheduled ahead, some of those cancelled); two receivers handle them (one fails"
          + " now and then, the other is killed mid-run and replaced).",
      "Prints progress every second, then one summary line. Exit code 0 when nothing was lost"
          + " and nothing fired that was rolled back, cancelled or not yet due."
    })
public final class DemoCommand implements Callable<Integer> {
  private static final String QUEUE = DemoDatabase.QUEUE;

  @Spec CommandSpec spec;

  @Option(
      names = "--events",
      defaultValue = "5000",
      description = "Order transactions to run, each adding one event (default: ${DEFAULT-VALUE}).")
  int events;

  @Option(
      names = "--rate",
      defaultValue = "250",
      description = "Transactions per second (default: ${DEFAULT-VALUE}).")
  int rate;

  @Option(
      names = "--timeout",
      defaultValue = "120",
      description =
          "Seconds to wait, once the producer is done, for every event to be acked or dead"
              + " (default: ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Option(names = "--seed", description = "Seed of the producer's choices (default: random).")
  Long seed;

  @Override
  public Integer call() throws Exception {
    validate();
    DemoLogging.quiet();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    long seedUsed = seed != null ? seed : ThreadLocalRandom.current().nextLong();
    long startNs = System.nanoTime();
    Ledger ledger = new Ledger();
    Tally tally = new Tally();

    err.println("demo: starting an embedded MariaDB (the first run unpacks it)...");
    err.flush();
    DemoReport report;
    try (DemoDatabase db = DemoDatabase.start()) {
      SluiceServer manager = new SluiceServer(managerConfig(db), Clock.systemUTC(), meters());
      try {
        manager.start();
        String target = "127.0.0.1:" + manager.port();
        err.printf(
            "demo: MariaDB on port %d, manager on %s; %d orders at %d/s (seed %d)%n",
            db.port(), target, events, rate, seedUsed);
        err.flush();
        try (DemoReceivers receivers = new DemoReceivers(target, tally);
            Canceller canceller = new Canceller(target, QUEUE)) {
          receivers.start();
          try (Progress progress = new Progress(out, ledger, tally, receivers).start()) {
            run(db, receivers, canceller, ledger, progress, seedUsed, err);
          }
        } // receivers close gracefully here, before the manager stops
      } finally {
        manager.stop();
      }
      report = DemoReport.compute(ledger, tally, db.dataSource());
    } // the database stops last
    printDiagnostics(err, ledger, tally, report, startNs);
    out.println(report.summaryLine());
    out.flush();
    return report.passed() ? 0 : 1;
  }

  /** Produces, kills a receiver half way, then waits until every event is finished. */
  private void run(
      DemoDatabase db,
      DemoReceivers receivers,
      Canceller canceller,
      Ledger ledger,
      Progress progress,
      long seedUsed,
      PrintWriter err)
      throws Exception {
    DemoProducer producer =
        new DemoProducer(db.dataSource(), canceller, ledger, events, rate, seedUsed);
    ExecutorService producerThread =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "demo-producer"));
    try {
      Future<?> produced = producerThread.submit(producer);
      // The crash comes half way, while events are flowing, so it holds some in flight.
      while (ledger.attempted() < events / 2 && !produced.isDone()) {
        Thread.sleep(10);
      }
      progress.note("killing receiver-doomed (abort: no more acks from it)");
      receivers.killAndReplace(Duration.ofSeconds(1));
      progress.note("receiver-replacement subscribed");
      try {
        produced.get();
      } catch (ExecutionException e) {
        throw new IllegalStateException("the producer failed: " + e.getCause(), e.getCause());
      }
    } finally {
      producerThread.shutdownNow();
    }
    awaitFinished(db, err);
  }

  /** Waits until no event is pending or fired: each is acked, dead or cancelled. */
  private void awaitFinished(DemoDatabase db, PrintWriter err) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    long unfinished;
    while ((unfinished = db.unfinished()) > 0) {
      if (System.nanoTime() > deadline) {
        err.printf(
            "demo: gave up after %d s with %d events still pending or fired%n",
            timeoutSeconds, unfinished);
        err.flush();
        return;
      }
      Thread.sleep(200);
    }
  }

  private static ManagerConfig managerConfig(DemoDatabase db) {
    return ManagerConfig.builder()
        .managerId("demo-manager")
        .grpcHost("127.0.0.1")
        .grpcPort(0)
        .shard("demo", db.url(), DemoDatabase.USER, DemoDatabase.PASSWORD)
        .discoveryInterval(Duration.ofSeconds(1))
        .shutdownTimeout(Duration.ofSeconds(5))
        .build();
  }

  private static SimpleMeterRegistry meters() {
    return new SimpleMeterRegistry();
  }

  private static void printDiagnostics(
      PrintWriter err, Ledger ledger, Tally tally, DemoReport report, long startNs) {
    err.printf(
        "demo: %d scheduled ahead, %d cancels refused, %d transactions failed unexpectedly;"
            + " handlers ran %d times for %d events, %d failures on purpose; took %.1f s%n",
        ledger.scheduledCount(),
        ledger.cancelRefusedCount(),
        ledger.failedCount(),
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

  private void validate() {
    if (events < 2) {
      throw new ParameterException(
          spec.commandLine(), "--events must be at least 2, was " + events);
    }
    if (rate < 1 || rate > 100_000) {
      throw new ParameterException(spec.commandLine(), "--rate must be 1..100000, was " + rate);
    }
    if (timeoutSeconds < 1) {
      throw new ParameterException(
          spec.commandLine(), "--timeout must be at least 1 s, was " + timeoutSeconds);
    }
  }
}
