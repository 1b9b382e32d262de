package dev.sluice.bench;

import dev.sluice.receiver.EventHandler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code fairness}: quiet tenants inserting at a steady rate while one noisy tenant has a large
 * backlog, the receivers (not the database) being the bottleneck. Runs the same workload three
 * ways, each on a fresh queue table: quiet tenants alone, with the backlog and fairness on, with
 * the backlog and plain FIFO; then Jain's fairness index of dispatch shares among backlogged
 * tenants. Before those, {@code --jit-warmup} seconds of the noisy workload, not measured: the
 * JIT's compiling would otherwise share the two cores with the measured seconds.
 */
@Command(
    name = "fairness",
    mixinStandardHelpOptions = true,
    description = {
      "Quiet tenants' due->delivered p99 next to a noisy tenant's backlog (fair vs FIFO), and",
      "Jain's index of dispatch shares among backlogged tenants.",
      "Ends with: fairness: quiet_p99_ms=A solo_p99_ms=B ratio=A/B fifo_ratio=F jain=J"
    })
final class FairnessCommand implements Callable<Integer> {
  static final String NOISY = "noisy";

  @Mixin ServerOptions serverOptions;

  @Option(
      names = "--queue-options",
      defaultValue = "",
      description =
          "Queue options replacing the defaults in every phase, e.g. 'poll_interval=10ms'"
              + " (default: "
              + SluiceSide.COMMENT
              + "; the phases add fair=true or fair=false)")
  String queueOptions;

  @Option(
      names = "--quick",
      description =
          "A shorter run: --backlog 50000 --warmup 2 --seconds 8 --jit-warmup 40 unless given")
  boolean quick;

  @Option(names = "--backlog", description = "The noisy tenant's backlog. Default: 200000")
  Long backlog;

  @Option(names = "--seconds", description = "Measured seconds per phase. Default: 20")
  Double seconds;

  @Option(names = "--warmup", description = "Seconds before measuring, per phase. Default: 5")
  Double warmup;

  @Option(names = "--quiet-tenants", defaultValue = "9", description = "Default: ${DEFAULT-VALUE}")
  int quietTenants;

  @Option(
      names = "--quiet-rate",
      defaultValue = "20",
      description = "Events/s per quiet tenant. Default: ${DEFAULT-VALUE}")
  double quietRate;

  @Option(
      names = "--producers",
      defaultValue = "3",
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
      defaultValue = "4",
      description =
          "Credits per receiver; equal to --concurrency so that no event waits in a receiver's"
              + " own buffer behind the backlog. Default: ${DEFAULT-VALUE}")
  int maxInFlight;

  @Option(
      names = "--handle-ms",
      defaultValue = "10",
      description = "Handling time per event (a sleep in the handler). Default: ${DEFAULT-VALUE}")
  long handleMs;

  @Option(
      names = "--jain-tenants",
      defaultValue = "10",
      description = "Backlogged tenants in the Jain phase. Default: ${DEFAULT-VALUE}")
  int jainTenants;

  @Option(
      names = "--jain-backlog",
      defaultValue = "5000",
      description = "Backlog per tenant in the Jain phase. Default: ${DEFAULT-VALUE}")
  long jainBacklog;

  @Option(
      names = "--jain-deliveries",
      defaultValue = "20000",
      description = "Deliveries counted in the Jain phase. Default: ${DEFAULT-VALUE}")
  long jainDeliveries;

  @Option(
      names = "--settle",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description =
          "Before each phase's manager starts, have the server write the pages its set-up dirtied"
              + " (the backlogs' bulk load), so that flushing them does not fall into the measured"
              + " seconds; --no-settle measures with that flushing. Default: settle")
  boolean settle;

  @Option(
      names = "--jit-warmup",
      description =
          "Seconds of the noisy workload (fairness on, nothing measured) before the first phase, so"
              + " that the JIT has compiled the paths the phases measure: on 2 cores its compiler"
              + " takes 30-60%% of a core for about 40 s once the backlog starts, and would"
              + " otherwise do so in the measured seconds. 0 turns it off. Default: 60 (--quick: 40)")
  Double jitWarmup;

  @Option(
      names = "--phases",
      split = ",",
      defaultValue = "solo,fair,fifo,jain",
      description =
          "Phases to run (solo, fair, fifo, jain); figures of phases left out print as n/a."
              + " Default: ${DEFAULT-VALUE}")
  java.util.Set<String> phases;

  record Phase(Histogram quiet, long quietSent, long noisyAtWindowEnd) {}

  private static final Phase SKIPPED = new Phase(new Histogram(3), 0, 0);

  @Override
  public Integer call() throws Exception {
    long backlogN = backlog != null ? backlog : quick ? 50_000 : 200_000;
    double secs = seconds != null ? seconds : quick ? 8 : 20;
    double warm = warmup != null ? warmup : quick ? 2 : 5;
    double jit = jitWarmup != null ? jitWarmup : quick ? 40 : 60;
    java.util.Set<String> known = java.util.Set.of("solo", "fair", "fifo", "jain");
    if (!known.containsAll(phases)) {
      throw new IllegalArgumentException(
          "--phases takes solo, fair, fifo and jain; unknown: "
              + phases.stream().filter(x -> !known.contains(x)).toList());
    }
    if (jainDeliveries >= jainTenants * jainBacklog) {
      throw new IllegalArgumentException(
          "--jain-deliveries must be below --jain-tenants x --jain-backlog");
    }
    Phase solo;
    Phase fair;
    Phase fifo;
    double jain;
    double jainFifo;
    try (BenchServer server = BenchServer.of(serverOptions)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      double capacity = receivers * concurrency * 1000.0 / handleMs;
      Progress.note(
          String.format(
              Locale.ROOT,
              "fairness: %d quiet tenants x %.0f events/s (one event per transaction, due now, %d"
                  + " producer threads) = %.0f/s; noisy backlog %,d due now; %d receivers x %d"
                  + " threads, %d credits each, %d ms handling => receiver ceiling %.0f events/s;"
                  + " %.0f s of JIT warm-up first, then %.0f s warm-up + %.0f s measured per phase;"
                  + " queue '%s' + fair=...",
              quietTenants,
              quietRate,
              producers,
              quietTenants * quietRate,
              backlogN,
              receivers,
              concurrency,
              maxInFlight,
              handleMs,
              capacity,
              jit,
              warm,
              secs,
              SluiceSide.useOptions(queueOptions)));
      if (jit > 0) {
        runPhase(server, "jit-warm-up", "fair=true", backlogN, jit, 0);
      }
      solo =
          phases.contains("solo") ? runPhase(server, "solo", "fair=true", 0, warm, secs) : SKIPPED;
      fair =
          phases.contains("fair")
              ? runPhase(server, "fair", "fair=true", backlogN, warm, secs)
              : SKIPPED;
      fifo =
          phases.contains("fifo")
              ? runPhase(server, "fifo", "fair=false", backlogN, warm, secs)
              : SKIPPED;
      jain = phases.contains("jain") ? runJain(server, "jain", "fair=true") : Double.NaN;
      jainFifo = phases.contains("jain") ? runJain(server, "jain-fifo", "fair=false") : Double.NaN;
    }
    double a = Latencies.ms(fair.quiet(), 99);
    double b = Latencies.ms(solo.quiet(), 99);
    double f = Latencies.ms(fifo.quiet(), 99);
    Progress.note(
        String.format(
            Locale.ROOT,
            "quiet p50: solo=%sms fair=%sms fifo=%sms; p99.9: solo=%sms fair=%sms fifo=%sms;"
                + " fifo p99=%sms; jain under fair=false (for comparison): %.4f",
            fmt(Latencies.ms(solo.quiet(), 50)),
            fmt(Latencies.ms(fair.quiet(), 50)),
            fmt(Latencies.ms(fifo.quiet(), 50)),
            fmt(Latencies.ms(solo.quiet(), 99.9)),
            fmt(Latencies.ms(fair.quiet(), 99.9)),
            fmt(Latencies.ms(fifo.quiet(), 99.9)),
            fmt(f),
            jainFifo));
    Machine.noteEnd();
    System.out.println(
        String.format(
            Locale.ROOT,
            "fairness: quiet_p99_ms=%s solo_p99_ms=%s ratio=%s fifo_ratio=%s jain=%s",
            fmt(a),
            fmt(b),
            fmt(a / b),
            fmt(f / b),
            Double.isNaN(jain) ? "n/a" : String.format(Locale.ROOT, "%.4f", jain)));
    return 0;
  }

  static String fmt(double v) {
    return Double.isNaN(v) || Double.isInfinite(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
  }

  /** Jain's fairness index of the shares {@code x}: (Σx)² / (n·Σx²), 1 when all are equal. */
  static double jainIndex(long[] x) {
    double sum = 0;
    double sq = 0;
    for (long v : x) {
      sum += v;
      sq += (double) v * v;
    }
    return sq == 0 ? Double.NaN : sum * sum / (x.length * sq);
  }

  private static EventHandler sleeping(long handleMs, EventHandler record) {
    return e -> {
      record.handle(e);
      if (handleMs > 0) {
        try {
          Thread.sleep(handleMs);
        } catch (InterruptedException stopped) {
          Thread.currentThread().interrupt(); // the receivers are aborted at a phase's end
        }
      }
    };
  }

  private Phase runPhase(
      BenchServer server, String label, String fairOption, long backlogN, double warm, double secs)
      throws Exception {
    String comment = SluiceSide.useOptions(queueOptions + " " + fairOption);
    Progress.note(label + ": fresh queue '" + comment + "', noisy backlog " + backlogN);
    Database db = server.createDatabase("bench_fair_" + label.replace('-', '_'));
    Latencies lat = new Latencies();
    Latencies toFire = new Latencies(); // due -> the dispatcher's fire round, by the DB clock
    Latencies fromFire = new Latencies(); // the fire round -> the handler, by the DB clock
    AtomicLong noisy = new AtomicLong();
    try (SluiceSide s = new SluiceSide(db)) {
      s.createQueue();
      if (backlogN > 0) {
        long t0 = System.nanoTime();
        insertBacklog(db, NOISY, backlogN);
        Progress.note(
            String.format(
                Locale.ROOT,
                "%s: inserted %,d noisy events in %.1f s",
                label,
                backlogN,
                (System.nanoTime() - t0) / 1e9));
      }
      if (settle) {
        ServerSettle.settle(server, label, 30);
      }
      s.startManager(10);
      s.startHandlers(
          receivers,
          concurrency,
          maxInFlight,
          sleeping(
              handleMs,
              e -> {
                long now = Latencies.wallNanos();
                if (NOISY.equals(e.tenant())) {
                  noisy.incrementAndGet();
                } else {
                  lat.record(e.dueTimeNanos(), now);
                  toFire.record(e.dueTimeNanos(), e.firedTimeNanos());
                  fromFire.record(e.firedTimeNanos(), now);
                }
              }));
      Producer producer =
          new Producer(
              db,
              "INSERT INTO " + SluiceSide.QUEUE + " (tenant, payload) VALUES (?, ?)",
              (ps, i) -> {
                ps.setString(1, "quiet-" + (i % quietTenants));
                ps.setString(2, "q" + i);
              },
              producers);
      lat.recording(warm <= 0);
      toFire.recording(warm <= 0);
      fromFire.recording(warm <= 0);
      long t0 = System.nanoTime();
      long warmNs = (long) (warm * 1e9);
      long[] noisyPrev = {0};
      try (Progress p =
          Progress.start(
              label,
              () -> {
                boolean measuring = System.nanoTime() - t0 >= warmNs;
                if (measuring) {
                  lat.recording(true);
                  toFire.recording(true);
                  fromFire.recording(true);
                }
                Histogram h = lat.interval();
                long n = noisy.get();
                String line =
                    String.format(
                        Locale.ROOT,
                        "%s quiet sent=%,d delivered=%,d last-second p50=%sms p99=%sms max=%sms;"
                            + " noisy delivered=%,d (%,d/s) left=%,d",
                        measuring ? "measuring" : "warm-up",
                        producer.sent(),
                        lat.count(),
                        fmt(Latencies.ms(h, 50)),
                        fmt(Latencies.ms(h, 99)),
                        fmt(Latencies.ms(h, 100)),
                        n,
                        n - noisyPrev[0],
                        backlogN - n);
                noisyPrev[0] = n;
                return line;
              })) {
        producer.run(quietTenants * quietRate, warm + secs);
      }
      long noisyAtEnd = noisy.get();
      if (secs > 0 && backlogN > 0 && noisyAtEnd >= backlogN) {
        Progress.note(
            label
                + ": WARNING the noisy backlog ran out before the window ended; use a larger"
                + " --backlog or fewer --seconds");
      }
      // Every quiet event sent must be delivered (under FIFO they wait for the backlog ahead).
      long deadline = System.nanoTime() + 900_000_000_000L;
      try (Progress p =
          Progress.start(
              label + " wait",
              () ->
                  String.format(
                      Locale.ROOT,
                      "waiting for quiet events: %,d of %,d delivered; noisy delivered=%,d",
                      lat.count(),
                      producer.sent(),
                      noisy.get()))) {
        while (lat.count() < producer.sent()) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException(
                label + ": quiet events not all delivered within 900 s");
          }
          Thread.sleep(10);
        }
      }
      if (secs <= 0) {
        Progress.note(
            String.format(
                Locale.ROOT,
                "%s: done, nothing measured; %,d quiet and %,d noisy events delivered",
                label,
                lat.count(),
                noisyAtEnd));
        s.stopReceivers();
        return SKIPPED;
      }
      Histogram h = lat.snapshot();
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: quiet due->delivered over %,d events: p50=%sms p90=%sms p99=%sms p99.9=%sms"
                  + " max=%sms; noisy delivered by the window's end: %,d of %,d",
              label,
              h.getTotalCount(),
              fmt(Latencies.ms(h, 50)),
              fmt(Latencies.ms(h, 90)),
              fmt(Latencies.ms(h, 99)),
              fmt(Latencies.ms(h, 99.9)),
              fmt(Latencies.ms(h, 100)),
              noisyAtEnd,
              backlogN));
      Histogram f = toFire.snapshot();
      Histogram ff = fromFire.snapshot();
      Histogram pc = producer.commitLatency();
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: of which due->fire round (the commit, a poll, a credit, its turn): p50=%sms"
                  + " p99=%sms; fire round->handler (the fire UPDATE, the send, the receiver):"
                  + " p50=%sms p99=%sms; the producer's own INSERT->COMMIT: p50=%sms p99=%sms",
              label,
              fmt(Latencies.ms(f, 50)),
              fmt(Latencies.ms(f, 99)),
              fmt(Latencies.ms(ff, 50)),
              fmt(Latencies.ms(ff, 99)),
              fmt(Latencies.ms(pc, 50)),
              fmt(Latencies.ms(pc, 99))));
      Progress.note(label + ": " + s.timerSummary("sluice.due.to.dispatch"));
      s.stopReceivers();
      return new Phase(h, producer.sent(), noisyAtEnd);
    } finally {
      server.drop(db);
    }
  }

  /**
   * Every tenant gets a backlog (inserted tenant after tenant, so the first tenant's events are the
   * oldest); counts deliveries per tenant over the first {@code jainDeliveries}.
   */
  private double runJain(BenchServer server, String label, String fairOption) throws Exception {
    String comment = SluiceSide.useOptions(queueOptions + " " + fairOption);
    Progress.note(
        String.format(
            Locale.ROOT,
            "%s: fresh queue '%s', %d tenants x %,d backlog; counting the first %,d deliveries",
            label,
            comment,
            jainTenants,
            jainBacklog,
            jainDeliveries));
    Database db = server.createDatabase("bench_fair_" + label.replace('-', '_'));
    AtomicLong seq = new AtomicLong();
    AtomicLongArray counts = new AtomicLongArray(jainTenants);
    try (SluiceSide s = new SluiceSide(db)) {
      s.createQueue();
      for (int t = 0; t < jainTenants; t++) {
        insertBacklog(db, "t" + t, jainBacklog);
      }
      if (settle) {
        ServerSettle.settle(server, label, 30);
      }
      s.startManager(10);
      s.startHandlers(
          receivers,
          concurrency,
          maxInFlight,
          sleeping(
              handleMs,
              e -> {
                long k = seq.incrementAndGet();
                if (k <= jainDeliveries) {
                  counts.incrementAndGet(Integer.parseInt(e.tenant().substring(1)));
                }
              }));
      long deadline = System.nanoTime() + 600_000_000_000L;
      try (Progress p =
          Progress.start(
              label,
              () ->
                  String.format(
                      Locale.ROOT,
                      "delivered=%,d of %,d counted; so far J=%.4f",
                      Math.min(seq.get(), jainDeliveries),
                      jainDeliveries,
                      jainIndex(snapshot(counts))))) {
        while (seq.get() < jainDeliveries) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException(label + ": too slow");
          }
          Thread.sleep(10);
        }
      }
      s.stopReceivers();
      long[] x = snapshot(counts);
      long min = Long.MAX_VALUE;
      long max = 0;
      for (long v : x) {
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      double j = jainIndex(x);
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: per-tenant deliveries min=%,d max=%,d %s (each tenant had %,d, so every"
                  + " tenant %s backlog throughout); J=%.4f",
              label,
              min,
              max,
              java.util.Arrays.toString(x),
              jainBacklog,
              max < jainBacklog ? "still had" : "did NOT have",
              j));
      return j;
    } finally {
      server.drop(db);
    }
  }

  private static long[] snapshot(AtomicLongArray a) {
    long[] x = new long[a.length()];
    for (int i = 0; i < x.length; i++) {
      x[i] = a.get(i);
    }
    return x;
  }

  /** Inserts {@code n} events of {@code tenant}, due now, with 500-row autocommit INSERTs. */
  static void insertBacklog(Database db, String tenant, long n) throws SQLException {
    int batch = 500;
    try (Connection c = db.connect()) {
      c.setAutoCommit(true);
      long done = 0;
      while (done < n) {
        int k = (int) Math.min(batch, n - done);
        StringBuilder sb =
            new StringBuilder("INSERT INTO " + SluiceSide.QUEUE + " (tenant, payload) VALUES ");
        for (int i = 0; i < k; i++) {
          sb.append(i == 0 ? "(?, ?)" : ",(?, ?)");
        }
        try (PreparedStatement ps = c.prepareStatement(sb.toString())) {
          int p = 1;
          for (int i = 0; i < k; i++) {
            ps.setString(p++, tenant);
            ps.setString(p++, "b" + (done + i));
          }
          ps.executeUpdate();
        }
        done += k;
      }
    }
  }
}
