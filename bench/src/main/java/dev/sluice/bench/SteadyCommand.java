package dev.sluice.bench;

import dev.sluice.core.config.BinlogMode;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code steady}: an application inserting at a fixed rate, one event per transaction; due →
 * delivered latency at the receiver, then the database's queries/s while the manager idles.
 */
@Command(
    name = "steady",
    mixinStandardHelpOptions = true,
    description = {
      "A producer at a fixed rate; due->delivered latency, and the manager's idle queries/s.",
      "Sluice runs once per --binlog mode (following the binlog, then polling alone).",
      "Ends with: steady: rate=R p50_ms=.. p99_ms=.. p999_ms=.. idle_qps=.. idle_qps_per_queue=.."
          + " polling_rate=.. polling_p99_ms=.. polling_p999_ms=.. polling_idle_qps=.. (and per queue)"
          + " db_scheduler_rate=.. db_scheduler_p99_ms=.."
    })
final class SteadyCommand implements Callable<Integer> {
  @Mixin ServerOptions serverOptions;

  @Option(
      names = "--queue-options",
      defaultValue = "",
      description =
          "Queue options replacing the defaults, e.g. 'poll_interval=10ms' (default: "
              + SluiceSide.COMMENT
              + ")")
  String queueOptions;

  @Option(
      names = "--rate",
      defaultValue = "1000",
      description =
          "Events/s asked of the producers; the rate reached is reported with each latency"
              + " (1000/s: what both peers reach on a 2-core machine). Default: ${DEFAULT-VALUE}")
  double rate;

  @Option(
      names = "--binlog",
      split = ",",
      defaultValue = "auto,off",
      description =
          "Sluice's runs: auto (the manager follows the server's binlog) and/or off (it polls"
              + " alone). Default: ${DEFAULT-VALUE}")
  List<String> binlogModes;

  @Option(
      names = "--seconds",
      defaultValue = "30",
      description = "Measured seconds. Default: ${DEFAULT-VALUE}")
  double seconds;

  @Option(
      names = "--warmup",
      defaultValue = "5",
      description = "Seconds at the same rate before measuring (JIT). Default: ${DEFAULT-VALUE}")
  double warmup;

  @Option(
      names = "--jit-warmup",
      defaultValue = "60",
      description =
          "Seconds of unmeasured Sluice runs before the first measured one, shared by the"
              + " --binlog modes, so that the first mode does not pay the JIT and the server's cold"
              + " start for the others (with 5 s, the mode measured first was the slower for it:"
              + " its JIT threads took 0.5 ms of CPU per event). Default: ${DEFAULT-VALUE}")
  double jitWarmup;

  @Option(
      names = "--idle-statements",
      description =
          "During the idle window, keep the server's general log and note the statements the idle"
              + " manager sends, by shape (needs SUPER; the embedded server allows it)")
  boolean idleStatements;

  @Option(
      names = "--idle-seconds",
      defaultValue = "5",
      description = "Length of the idle window. Default: ${DEFAULT-VALUE}")
  double idleSeconds;

  @Option(
      names = "--producers",
      defaultValue = "4",
      description = "Producer threads (a connection each). Default: ${DEFAULT-VALUE}")
  int producers;

  @Option(names = "--receivers", defaultValue = "4", description = "Default: ${DEFAULT-VALUE}")
  int receivers;

  @Option(
      names = "--concurrency",
      defaultValue = "4",
      description = "Handler threads per receiver. Default: ${DEFAULT-VALUE}")
  int concurrency;

  @Option(
      names = "--max-in-flight",
      defaultValue = "64",
      description = "Credits per receiver. Default: ${DEFAULT-VALUE}")
  int maxInFlight;

  @Option(
      names = "--peers",
      split = ",",
      defaultValue = "sluice,db-scheduler",
      description = "Which to run, in order. Default: ${DEFAULT-VALUE}")
  List<String> peers;

  @Option(
      names = "--db-scheduler-polling-ms",
      defaultValue = "100",
      description = "db-scheduler's polling interval. Default: ${DEFAULT-VALUE}")
  long dbsPollingMs;

  static final int EXTRA_QUEUES = 10;

  record Outcome(double achievedRate, Histogram latency, double idleQps, double idlePerQueue) {}

  @Override
  public Integer call() throws Exception {
    SluiceSide.useOptions(queueOptions);
    Outcome sluice = null;
    Outcome polling = null;
    Outcome dbs = null;
    try (BenchServer server = BenchServer.of(serverOptions);
        ServerStatus status = new ServerStatus(server)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      Progress.note(
          String.format(
              Locale.ROOT,
              "steady: %.0f events/s for %.0f s after %.0f s warm-up, %d producer threads (one"
                  + " event per transaction); sluice: %d receivers x %d threads, %d credits, queue"
                  + " '%s'; db-scheduler: %s",
              rate,
              seconds,
              warmup,
              producers,
              receivers,
              concurrency,
              maxInFlight,
              SluiceSide.comment(),
              DbSchedulerSide.Settings.defaults(Duration.ofMillis(dbsPollingMs))));
      for (String p : peers) {
        switch (p) {
          case "sluice" -> {
            for (String mode : binlogModes) {
              if (jitWarmup > 0) {
                SluiceSide.useBinlog(BinlogMode.parse("bench", mode));
                runSluice(server, status, "warm-up-" + mode, jitWarmup / binlogModes.size());
              }
            }
            for (String mode : binlogModes) {
              BinlogMode m = BinlogMode.parse("bench", mode);
              SluiceSide.useBinlog(m);
              String label = m == BinlogMode.OFF ? "sluice-polling" : "sluice";
              Outcome o = runSluice(server, status, label, 0);
              if (m == BinlogMode.OFF) {
                polling = o;
              } else {
                sluice = o;
              }
              System.gc();
              Thread.sleep(1000);
            }
          }
          case "db-scheduler" -> dbs = runDbScheduler(server, status);
          default ->
              throw new IllegalArgumentException(
                  "--peers: unknown peer '" + p + "' (sluice, db-scheduler)");
        }
        System.gc();
        Thread.sleep(1000);
      }
    }
    Histogram h = sluice == null ? new Histogram(3) : sluice.latency();
    Machine.noteEnd();
    System.out.println(
        String.format(
            Locale.ROOT,
            "steady: rate=%.0f p50_ms=%s p99_ms=%s p999_ms=%s idle_qps=%s idle_qps_per_queue=%s"
                + " polling_rate=%s polling_p99_ms=%s polling_p999_ms=%s polling_idle_qps=%s"
                + " polling_idle_qps_per_queue=%s"
                + " db_scheduler_rate=%s db_scheduler_p99_ms=%s",
            sluice == null ? rate : sluice.achievedRate(),
            fmt(Latencies.ms(h, 50)),
            fmt(Latencies.ms(h, 99)),
            fmt(Latencies.ms(h, 99.9)),
            sluice == null ? "n/a" : String.format(Locale.ROOT, "%.1f", sluice.idleQps()),
            sluice == null ? "n/a" : String.format(Locale.ROOT, "%.2f", sluice.idlePerQueue()),
            polling == null ? "n/a" : String.format(Locale.ROOT, "%.0f", polling.achievedRate()),
            polling == null ? "n/a" : fmt(Latencies.ms(polling.latency(), 99)),
            polling == null ? "n/a" : fmt(Latencies.ms(polling.latency(), 99.9)),
            polling == null ? "n/a" : String.format(Locale.ROOT, "%.1f", polling.idleQps()),
            polling == null ? "n/a" : String.format(Locale.ROOT, "%.2f", polling.idlePerQueue()),
            dbs == null ? "n/a" : String.format(Locale.ROOT, "%.0f", dbs.achievedRate()),
            dbs == null ? "n/a" : fmt(Latencies.ms(dbs.latency(), 99))));
    return 0;
  }

  static String fmt(double ms) {
    return Double.isNaN(ms) ? "n/a" : String.format(Locale.ROOT, "%.2f", ms);
  }

  /**
   * One Sluice run on a fresh database; {@code warmUpOnly > 0}: that many seconds at the rate, not
   * measured (nothing reported, no idle measurement), returning null.
   */
  private Outcome runSluice(BenchServer server, ServerStatus status, String peer, double warmUpOnly)
      throws Exception {
    Database db = server.createDatabase("bench_" + peer.replace('-', '_'));
    Latencies lat = new Latencies();
    try (SluiceSide s = new SluiceSide(db)) {
      s.createQueue();
      s.startManager(10);
      s.startReceivers(
          receivers, concurrency, maxInFlight, due -> lat.record(due, Latencies.wallNanos()));
      Producer producer =
          new Producer(
              db,
              "INSERT INTO " + SluiceSide.QUEUE + " (payload) VALUES (?)",
              (ps, i) -> ps.setString(1, "e" + i),
              producers);
      if (warmUpOnly > 0) {
        produce(peer, producer, lat, warmUpOnly, 0);
        awaitDelivered(peer, producer::sent, lat);
        s.stopReceivers();
        return null;
      }
      CpuMeter cpu = new CpuMeter(server);
      cpu.start();
      double achieved = produce(peer, producer, lat, warmup, seconds);
      awaitDelivered(peer, producer::sent, lat);
      String cpuPerEvent = cpu.perEvent(producer.sent());
      report(peer, lat.snapshot(), achieved);
      reportCommits(peer, producer);
      // Where the CPU went, warm-up included: on 2 cores, what the binlog stream costs the server
      // and the manager shows as latency.
      Progress.note(peer + ": CPU per event: " + cpuPerEvent);
      // The path by stage: due (the insert) → read into the window → fired → at the handler.
      Progress.note(s.timerSummary("sluice.due.to.window"));
      Progress.note(s.timerSummary("sluice.due.to.dispatch"));
      Progress.note(s.timerSummary("sluice.poll.duration"));
      double idle = idleQps(server, peer, status);
      // What each more idle queue costs: ten more, served, then the idle rate again.
      for (int i = 1; i <= EXTRA_QUEUES; i++) {
        s.createQueue(SluiceSide.QUEUE + "_idle_" + i);
      }
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (s.server().engine().served().size() < EXTRA_QUEUES + 1
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      double idleMore = idleQps(server, peer + " +" + EXTRA_QUEUES + " queues", status);
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: each more idle queue: %.2f queries/s",
              peer,
              (idleMore - idle) / EXTRA_QUEUES));
      s.stopReceivers();
      return new Outcome(achieved, lat.snapshot(), idle, (idleMore - idle) / EXTRA_QUEUES);
    } finally {
      server.drop(db);
    }
  }

  private Outcome runDbScheduler(BenchServer server, ServerStatus status) throws Exception {
    Database db = server.createDatabase("bench_dbsched");
    Latencies lat = new Latencies();
    try (DbSchedulerSide d =
        new DbSchedulerSide(
            db, DbSchedulerSide.Settings.defaults(Duration.ofMillis(dbsPollingMs)))) {
      d.createTable();
      d.start(due -> lat.record(due, Latencies.wallNanos()));
      Producer producer =
          new Producer(
              db, DbSchedulerSide.insertOneSql(), (ps, i) -> ps.setString(1, "s" + i), producers);
      double achieved = produce("db-scheduler", producer, lat, warmup, seconds);
      awaitDelivered("db-scheduler", producer::sent, lat);
      report("db-scheduler", lat.snapshot(), achieved);
      reportCommits("db-scheduler", producer);
      double idle = idleQps(server, "db-scheduler", status);
      return new Outcome(achieved, lat.snapshot(), idle, Double.NaN);
    } finally {
      server.drop(db);
    }
  }

  /** Runs the producer for warm-up + measured seconds; returns the measured rate achieved. */
  private double produce(
      String peer, Producer producer, Latencies lat, double warmup, double seconds)
      throws Exception {
    lat.recording(warmup <= 0);
    long t0 = System.nanoTime();
    long warmupNs = (long) (warmup * 1e9);
    long[] sentAtWarmupEnd = {-1};
    try (Progress p =
        Progress.start(
            peer,
            () -> {
              boolean measuring = System.nanoTime() - t0 >= warmupNs;
              if (measuring && sentAtWarmupEnd[0] < 0) {
                sentAtWarmupEnd[0] = producer.sent();
                lat.recording(true);
              }
              Histogram h = lat.interval();
              return String.format(
                  Locale.ROOT,
                  "%s sent=%,d delivered=%,d last-second p50=%sms p99=%sms max=%sms",
                  measuring ? "measuring" : "warm-up",
                  producer.sent(),
                  lat.count(),
                  fmt(Latencies.ms(h, 50)),
                  fmt(Latencies.ms(h, 99)),
                  fmt(Latencies.ms(h, 100)));
            })) {
      producer.run(rate, warmup + seconds);
    }
    double s = (System.nanoTime() - t0) / 1e9;
    return producer.sent() / s;
  }

  private static void awaitDelivered(String peer, LongSupplier sent, Latencies lat)
      throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (lat.count() < sent.getAsLong()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            peer + ": only " + lat.count() + " of " + sent.getAsLong() + " delivered in 60 s");
      }
      Thread.sleep(10);
    }
  }

  /** The producer's own share of due→delivered: no poller sees a row before its COMMIT. */
  private static void reportCommits(String peer, Producer producer) {
    Histogram c = producer.commitLatency();
    Progress.note(
        String.format(
            Locale.ROOT,
            "%s: producer INSERT->COMMIT (inside due->delivered, before any poll can see the"
                + " row): p50=%sms p99=%sms p99.9=%sms",
            peer,
            fmt(Latencies.ms(c, 50)),
            fmt(Latencies.ms(c, 99)),
            fmt(Latencies.ms(c, 99.9))));
  }

  private static void report(String peer, Histogram h, double achieved) {
    Progress.note(
        String.format(
            Locale.ROOT,
            "%s: produced %.0f/s; due->delivered over %,d events: p50=%sms p90=%sms p99=%sms"
                + " p99.9=%sms max=%sms",
            peer,
            achieved,
            h.getTotalCount(),
            fmt(Latencies.ms(h, 50)),
            fmt(Latencies.ms(h, 90)),
            fmt(Latencies.ms(h, 99)),
            fmt(Latencies.ms(h, 99.9)),
            fmt(Latencies.ms(h, 100))));
  }

  /** The server's queries/s over an idle window, without the probe's own two statements. */
  private double idleQps(BenchServer server, String peer, ServerStatus status) throws Exception {
    Thread.sleep(2000); // last acks written, nothing left to do
    var before = status.read();
    IdleStatements log = new IdleStatements(server);
    if (idleStatements) {
      log.start();
    }
    try (Progress p = Progress.start(peer + " idle", () -> "measuring the idle query rate")) {
      Thread.sleep((long) (idleSeconds * 1000));
    }
    var d = ServerStatus.Delta.between(before, status.read());
    log.report(peer, idleSeconds);
    double qps = d.questions() / idleSeconds;
    Progress.note(
        String.format(
            Locale.ROOT,
            "%s: idle for %.0f s: %.1f queries/s (%s per second)",
            peer,
            idleSeconds,
            qps,
            d.perEvent(Math.round(idleSeconds)).replace("=", ":")));
    return qps;
  }
}
