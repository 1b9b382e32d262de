package dev.sluice.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.config.BinlogMode;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.manager.config.ChannelConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code drain}: N events due now, drained by each peer in turn, each in a fresh database on the
 * same server. The rate counts from the first dispatch to the last ack written.
 */
@Command(
    name = "drain",
    mixinStandardHelpOptions = true,
    description = {
      "N events due now; events/s from first dispatch to last ack, per peer.",
      "Ends with: drain: sluice=X/s db_scheduler=Y/s floor=Z/s ratio=X/Y floor_ratio=X/Z",
      "With --outlet K, also: sluice_K=C/s K_floor=B/s K_floor_ratio=C/B",
      "With --groups, then: groups: grouped=X/s plain=Y/s ratio=X/Y"
    })
final class DrainCommand implements Callable<Integer> {
  @Mixin ServerOptions serverOptions;

  @Option(
      names = "--queue-options",
      defaultValue = "",
      description =
          "Queue options replacing the defaults, e.g. 'poll_interval=10ms' (default: "
              + SluiceSide.COMMENT
              + ")")
  String queueOptions;

  @Option(names = "--events", description = "Events per peer (default 200,000; --quick 50,000)")
  Long events;

  @Option(
      names = "--warmup",
      description =
          "Events each of sluice, floor and db-scheduler drains first, untimed, on a database of"
              + " its own, so that every peer is measured with the JIT warmed the same way"
              + " (default: a tenth of the events, at least 5,000; none below 10,000 events or"
              + " with --groups, whose peers run twice; 0: none)")
  Long warmup;

  @Option(
      names = "--binlog",
      defaultValue = "auto",
      description =
          "auto: the manager follows the server's binlog (the embedded server logs one); off: it"
              + " polls alone. Default: ${DEFAULT-VALUE}")
  String binlog;

  @Option(names = "--quick", description = "50,000 events per peer")
  boolean quick;

  @Option(names = "--receivers", defaultValue = "4", description = "Default: ${DEFAULT-VALUE}")
  int receivers;

  @Option(
      names = "--concurrency",
      defaultValue = "4",
      description = "Handler threads per receiver. Default: ${DEFAULT-VALUE}")
  int concurrency;

  @Option(
      names = "--max-in-flight",
      defaultValue = "256",
      description = "Credits per receiver. Default: ${DEFAULT-VALUE}")
  int maxInFlight;

  @Option(
      names = "--pool-size",
      defaultValue = "10",
      description = "The manager's connections to the shard. Default: ${DEFAULT-VALUE}")
  int poolSize;

  @Option(
      names = "--peers",
      split = ",",
      description =
          "Which to run, in order: sluice, floor, db-scheduler, and with --outlet K also sluice_K"
              + " and K_floor. Default: "
              + DEFAULT_PEERS
              + "; with --outlet K: sluice,sluice_K,K_floor")
  List<String> peers;

  static final String DEFAULT_PEERS = "sluice,floor,db-scheduler";

  /**
   * The peers given the same untimed warm-up drain before their measured one ({@code --warmup}).
   */
  static final Set<String> WARMED_PEERS = Set.of("sluice", "floor", "db-scheduler");

  @Option(
      names = "--outlet",
      paramLabel = "K",
      description =
          "kafka or rabbitmq: also drain the same N events from a queue bound to a channel of that"
              + " kind (peer sluice_K: the manager publishes each event and acks it once the"
              + " broker confirmed), and publish N messages of the same size and headers straight"
              + " through the same publisher (peer K_floor). Kafka: an embedded broker in this"
              + " JVM; rabbitmq: the local RabbitMQ at 127.0.0.1:5672 if one answers, else an"
              + " embedded Qpid broker")
  String outlet;

  @Option(
      names = "--db-scheduler-polling-ms",
      defaultValue = "100",
      description = "db-scheduler's polling interval. Default: ${DEFAULT-VALUE}")
  long dbsPollingMs;

  @Option(
      names = "--tls",
      description =
          "Also run Sluice with mutual TLS and token authentication (after the plain run, on the"
              + " same server) and print the cost: tls_cost = 1 - sluice_tls / sluice")
  boolean tls;

  @Option(
      names = "--groups",
      description =
          "Also drain the same N events as the children of groups of --group-size"
              + " (peer grouped: a grouped queue, and one completion event per group in a"
              + " completion queue, each group and its completion inserted in one transaction),"
              + " and compare with the plain drain of the sluice peer: ends with groups:"
              + " grouped=X/s plain=Y/s ratio=X/Y. The grouped rate counts the N children only,"
              + " from the resume to the ack of the last completion. Default peers with --groups:"
              + " sluice,grouped,sluice,grouped: the first round warms the JIT up, and a peer run"
              + " twice reports its last run")
  boolean groups;

  @Option(
      names = "--group-size",
      description =
          "Children per group with --groups (default 100): small groups show what each group"
              + " costs (its seal, check and completion)")
  int groupSize = 100;

  @Option(
      names = "--group-index",
      description =
          "The grouped queue's group index with --groups: key, the convention (group_key), or"
              + " key-state, earlier versions' (group_key, state), which moves at every fire and"
              + " ack of a child (default: key)")
  String groupIndex = "key";

  private CpuMeter cpu;

  @Override
  public Integer call() throws Exception {
    SluiceSide.useOptions(queueOptions);
    SluiceSide.useBinlog(BinlogMode.parse("bench", binlog));
    long n = events != null ? events : quick ? 50_000 : 200_000;
    ChannelConfig.Kind kind = outlet == null ? null : OutletBroker.kindOf(outlet);
    String outletPeer = kind == null ? null : "sluice_" + kind.word();
    String brokerFloorPeer = kind == null ? null : kind.word() + "_floor";
    if (peers == null) {
      peers =
          groups
              ? List.of("sluice", "grouped", "sluice", "grouped")
              : kind == null
                  ? List.of(DEFAULT_PEERS.split(","))
                  : List.of("sluice", outletPeer, brokerFloorPeer);
    }
    if (!List.of("key", "key-state").contains(groupIndex)) {
      throw new IllegalArgumentException(
          "--group-index: key or key-state, not '" + groupIndex + "'");
    }
    if (groupSize < 1) {
      throw new IllegalArgumentException(
          "--group-size: at least 1 child per group, not " + groupSize);
    }
    List<String> known = new ArrayList<>(List.of("sluice", "floor", "db-scheduler"));
    if (groups) {
      known.add("grouped");
    }
    if (kind != null) {
      known.addAll(List.of(outletPeer, brokerFloorPeer));
    }
    for (String p : peers) {
      if (!known.contains(p)) {
        throw new IllegalArgumentException(
            "--peers: unknown peer '"
                + p
                + "' ("
                + String.join(", ", known)
                + (kind == null ? "; sluice_K and K_floor need --outlet K" : "")
                + (groups ? "" : "; grouped needs --groups")
                + ")");
      }
    }
    double sluice = Double.NaN;
    double dbs = Double.NaN;
    double floor = Double.NaN;
    double sluiceTls = Double.NaN;
    double sluiceOutlet = Double.NaN;
    double brokerFloor = Double.NaN;
    double grouped = Double.NaN;
    String completionLagMs = "";
    OutletBroker broker = null;
    try (BenchServer server = BenchServer.of(serverOptions);
        ServerStatus status = new ServerStatus(server)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      cpu = new CpuMeter(server);
      GroupedDrain groupedDrain =
          new GroupedDrain(
              receivers,
              concurrency,
              maxInFlight,
              poolSize,
              groupSize,
              groupIndex.equals("key-state"),
              cpu);
      ChannelDrain channelDrain = new ChannelDrain(poolSize, cpu);
      Progress.note(
          String.format(
              Locale.ROOT,
              "drain: %,d events per peer; sluice: %d receivers x %d handler threads, %d credits"
                  + " each, queue '%s'; db-scheduler: %s",
              n,
              receivers,
              concurrency,
              maxInFlight,
              SluiceSide.comment(),
              DbSchedulerSide.Settings.defaults(Duration.ofMillis(dbsPollingMs))));
      long w = warmup != null ? warmup : groups || n < 10_000 ? 0 : Math.max(5_000, n / 10);
      Set<String> warmed = new HashSet<>();
      for (String p : peers) {
        if (w > 0 && WARMED_PEERS.contains(p) && warmed.add(p)) {
          Progress.note(
              String.format(Locale.ROOT, "warm-up: %s drains %,d events first, not counted", p, w));
          switch (p) {
            case "sluice" -> runSluice(server, status, w, false);
            case "floor" -> runFloor(server, status, w);
            default -> runDbScheduler(server, status, w);
          }
          System.gc();
          Thread.sleep(1000);
        }
        switch (p) {
          case "sluice" -> {
            if (!Double.isNaN(sluice)) {
              Progress.note(
                  "sluice: the earlier run gave " + rate(sluice) + "; this one replaces it");
            }
            sluice = runSluice(server, status, n, false);
            if (tls) {
              System.gc();
              Thread.sleep(1000);
              sluiceTls = runSluice(server, status, n, true);
            }
          }
          case "floor" -> floor = runFloor(server, status, n);
          case "db-scheduler" -> dbs = runDbScheduler(server, status, n);
          case "grouped" -> {
            if (!Double.isNaN(grouped)) {
              Progress.note(
                  "grouped: the earlier run gave " + rate(grouped) + "; this one replaces it");
            }
            grouped = groupedDrain.run(server, status, n);
            completionLagMs = groupedDrain.completionLagMs();
          }
          default -> {
            // The broker starts when a channel peer first needs it (not during the peers before).
            if (broker == null) {
              broker = ChannelDrain.startBroker(kind);
            }
            if (p.equals(outletPeer)) {
              sluiceOutlet = channelDrain.runOutlet(server, status, n, broker);
            } else {
              brokerFloor = channelDrain.runBrokerFloor(n, broker);
            }
          }
        }
        if (n >= 10_000) {
          System.gc(); // the next peer starts on an even footing
          Thread.sleep(1000);
        }
      }
    } finally {
      if (broker != null) {
        broker.close();
      }
    }
    Machine.noteEnd();
    System.out.println(
        String.format(
                Locale.ROOT,
                "drain: sluice=%s db_scheduler=%s floor=%s ratio=%s floor_ratio=%s",
                rate(sluice),
                rate(dbs),
                rate(floor),
                ratio(sluice, dbs),
                ratio(sluice, floor))
            + (tls
                ? String.format(
                    Locale.ROOT,
                    " sluice_tls=%s tls_cost=%s",
                    rate(sluiceTls),
                    Double.isNaN(sluice) || Double.isNaN(sluiceTls)
                        ? "n/a"
                        : String.format(Locale.ROOT, "%.1f%%", 100 * (1 - sluiceTls / sluice)))
                : "")
            + (kind != null
                ? String.format(
                    Locale.ROOT,
                    " %s=%s %s=%s %s_ratio=%s",
                    outletPeer,
                    rate(sluiceOutlet),
                    brokerFloorPeer,
                    rate(brokerFloor),
                    brokerFloorPeer,
                    ratio(sluiceOutlet, brokerFloor))
                : ""));
    if (groups) {
      System.out.println(
          String.format(
              Locale.ROOT,
              "groups: grouped=%s plain=%s ratio=%s%s (grouped: %,d children in groups of %d"
                  + " on (%s),"
                  + " counted without their %,d completions, clocked to the last completion's ack;"
                  + " completion lag: from a group's last child ack to its completion, by the"
                  + " database's clock)",
              rate(grouped),
              rate(sluice),
              ratio(grouped, sluice),
              completionLagMs,
              n,
              groupSize,
              groupIndex.equals("key-state") ? "group_key, state" : "group_key",
              (n + groupSize - 1) / groupSize));
    }
    return 0;
  }

  static String rate(double r) {
    return Double.isNaN(r) ? "n/a" : String.format(Locale.ROOT, "%.0f/s", r);
  }

  static String ratio(double a, double b) {
    return Double.isNaN(a) || Double.isNaN(b) || b == 0
        ? "n/a"
        : String.format(Locale.ROOT, "%.2f", a / b);
  }

  private double runSluice(BenchServer server, ServerStatus status, long n, boolean secure)
      throws Exception {
    String name = secure ? "sluice-tls" : "sluice";
    Database db = server.createDatabase(secure ? "bench_sluice_tls" : "bench_sluice");
    AtomicLong delivered = new AtomicLong();
    try (SluiceSide s = new SluiceSide(db)) {
      if (secure) {
        s.secure();
      }
      s.createQueue();
      QueueManager q = s.startManager(poolSize);
      s.setPaused(true);
      s.startReceivers(receivers, concurrency, maxInFlight, due -> delivered.incrementAndGet());
      load(name, n, p -> s.insertDueNow(n, p));
      Progress.note(name + ": receivers subscribed, queue paused with the events loaded; resuming");
      Map<String, Long> before = status.read();
      cpu.start();
      long t0 = System.nanoTime();
      var polledCounter = s.counterOf("sluice.poll.rows");
      double polledBefore = polledCounter.count();
      s.setPaused(false);
      var ackedCounter = s.counterOf("sluice.events.acked");
      LongSupplier acked = () -> (long) ackedCounter.count();
      double rate =
          await(
              name,
              n,
              acked,
              t0,
              () -> {
                QueueManager.LiveStats live = q.live();
                return String.format(
                    Locale.ROOT,
                    "delivered=%,d window=%,d in_flight=%,d",
                    delivered.get(),
                    live.cached(),
                    live.inFlight());
              });
      report(name, ServerStatus.Delta.between(before, status.read()), n);
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: rows polled per event: %.2f (each read by a poll and handed to the dispatcher,"
                  + " the window's own rows again included)",
              name,
              (polledCounter.count() - polledBefore) / n));
      s.stopReceivers();
      return rate;
    } finally {
      server.drop(db);
    }
  }

  /**
   * The same N events as the children of groups of {@code --group-size}, in a grouped queue, with a
   * completion per group in {@link SluiceSide#COMPLETIONS}; both queues paused while they load,
   * then resumed together. The same receivers drain the children ({@code --receivers}) and one more
   * the completions. Counts the N children only, from the resume to the moment the last completion
   * is acked (a completion fires once its group's children are all acked).
   */
  private double runFloor(BenchServer server, ServerStatus status, long n) throws Exception {
    Database db = server.createDatabase("bench_floor");
    try (HikariDataSource ds = db.pool("floor", 4)) {
      db.exec(RawFloor.ddl());
      SluiceSide loader = new SluiceSide(db);
      load("floor", n, p -> loader.insertDueNow(n, p));
      RawFloor floor = new RawFloor(ds);
      Map<String, Long> before = status.read();
      cpu.start();
      long t0 = System.nanoTime();
      Thread runner =
          new Thread(
              () -> {
                try {
                  floor.drain(n);
                } catch (Exception e) {
                  throw new IllegalStateException("floor failed", e);
                }
              },
              "floor-runner");
      runner.start();
      double rate =
          await("floor", n, floor::acked, t0, () -> String.format("fired=%,d", floor.fired()));
      runner.join();
      report("floor", ServerStatus.Delta.between(before, status.read()), n);
      return rate;
    } finally {
      server.drop(db);
    }
  }

  private double runDbScheduler(BenchServer server, ServerStatus status, long n) throws Exception {
    Database db = server.createDatabase("bench_dbsched");
    AtomicLong executed = new AtomicLong();
    try (DbSchedulerSide d =
        new DbSchedulerSide(
            db, DbSchedulerSide.Settings.defaults(Duration.ofMillis(dbsPollingMs)))) {
      d.createTable();
      load("db-scheduler", n, p -> d.insertDueNow(n, "t", p));
      Map<String, Long> before = status.read();
      cpu.start();
      long started = System.nanoTime();
      d.start(due -> executed.incrementAndGet());
      // The clock starts at the first execution, as for the others at the first dispatch.
      while (d.firstExecutionNs() == 0 && System.nanoTime() - started < 60_000_000_000L) {
        Thread.sleep(1);
      }
      long t0 = d.firstExecutionNs();
      double rate =
          await(
              "db-scheduler",
              n,
              d::completed,
              t0,
              () -> String.format("executed=%,d", executed.get()));
      report("db-scheduler", ServerStatus.Delta.between(before, status.read()), n);
      return rate;
    } finally {
      server.drop(db);
    }
  }

  interface Loader {
    void load(java.util.function.LongConsumer progress) throws Exception;
  }

  static void load(String peer, long n, Loader loader) throws Exception {
    AtomicLong done = new AtomicLong();
    long t0 = System.nanoTime();
    try (Progress p =
        Progress.start(
            peer + " load", () -> String.format(Locale.ROOT, "inserted=%,d/%,d", done.get(), n))) {
      loader.load(done::set);
    }
    double s = (System.nanoTime() - t0) / 1e9;
    Progress.note(
        String.format(Locale.ROOT, "%s: loaded %,d events in %.1f s (%.0f/s)", peer, n, s, n / s));
  }

  /**
   * Waits until {@code done} reaches {@code n}, printing progress; returns events/s from {@code t0}
   * to the moment it did.
   */
  static double await(String peer, long n, LongSupplier done, long t0, Extra extra)
      throws InterruptedException {
    long timeoutNs = Math.max(120, n / 500) * 1_000_000_000L;
    long[] last = {0, t0};
    try (Progress p =
        Progress.start(
            peer,
            () -> {
              long now = System.nanoTime();
              long d = done.getAsLong();
              double r = (d - last[0]) / ((now - last[1]) / 1e9);
              last[0] = d;
              last[1] = now;
              return String.format(
                  Locale.ROOT, "acked=%,d/%,d rate=%,.0f/s %s", d, n, r, extra.get());
            })) {
      while (done.getAsLong() < n) {
        if (System.nanoTime() - t0 > timeoutNs) {
          throw new IllegalStateException(
              peer + ": only " + done.getAsLong() + " of " + n + " done after the timeout");
        }
        Thread.sleep(1);
      }
    }
    long t1 = System.nanoTime();
    double s = (t1 - t0) / 1e9;
    double rate = n / s;
    Progress.note(
        String.format(Locale.ROOT, "%s: %,d events in %.2f s = %.0f/s", peer, n, s, rate));
    return rate;
  }

  /** A workload's own figures for the progress line. */
  interface Extra {
    String get();
  }

  void report(String peer, ServerStatus.Delta d, long n) {
    report(cpu, peer, d, n);
  }

  /** A peer's CPU and statements per event, as notes. */
  static void report(CpuMeter cpu, String peer, ServerStatus.Delta d, long n) {
    Progress.note(peer + ": CPU per event: " + cpu.perEvent(n));
    Progress.note(peer + ": statements per event: " + d.perEvent(n));
  }
}
