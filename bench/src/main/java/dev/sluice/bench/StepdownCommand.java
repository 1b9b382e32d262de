package dev.sluice.bench;

import dev.sluice.core.EngineConfig;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.KeyRange;
import dev.sluice.db.QueueConvention;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code stepdown}: one shard with N queue tables, led by an in-process {@link QueueEngine} with a
 * {@link HoldingOutlet} on every queue holding some events, made to step down — its lease taken by
 * another owner, or its primary made read-only — a few rounds each. Measures how long the shard
 * takes from the cause being detected (the shard stops leading) until no queue of it has a worker
 * thread left, and from the cause being applied.
 */
@Command(
    name = "stepdown",
    mixinStandardHelpOptions = true,
    description = {
      "One shard with N queues steps down (lease lost, primary read-only); time to stop.",
      "Ends with: stepdown: queues=.. lease_lost_stop_ms=min/median/max"
          + " read_only_stop_ms=min/median/max"
    })
final class StepdownCommand implements Callable<Integer> {
  static final String SHARD = "sd";

  /** Names of the queues' worker threads: {@code sluice-<shard>-<queue>-...}. */
  static final String WORKER_PREFIX = "sluice-" + SHARD + "-q";

  static final int WORKERS_PER_QUEUE = 5;

  @Mixin ServerOptions serverOptions;

  @Option(names = "--queues", defaultValue = "100", description = "Default: ${DEFAULT-VALUE}")
  int queues;

  @Option(
      names = "--rounds",
      defaultValue = "5",
      description = "Step-downs per cause. Default: ${DEFAULT-VALUE}")
  int rounds;

  @Option(
      names = "--events",
      defaultValue = "10",
      description = "Events held in flight per queue at each step-down. Default: ${DEFAULT-VALUE}")
  int events;

  @Option(
      names = "--causes",
      defaultValue = "lease,read-only",
      split = ",",
      description = "lease (another owner takes the lease row), read-only (SET GLOBAL read_only=1)")
  List<String> causes;

  @Option(
      names = "--lease-renew-ms",
      defaultValue = "200",
      description = "How often the lease is renewed (bounds detection). Default: ${DEFAULT-VALUE}")
  long renewMs;

  /** Events delivered to every outlet of the run, and outlets attached to a serving queue. */
  private final AtomicLong delivered = new AtomicLong();

  private final AtomicInteger attached = new AtomicInteger();

  @Override
  public Integer call() throws Exception {
    for (String c : causes) {
      if (!c.equals("lease") && !c.equals("read-only")) {
        throw new IllegalArgumentException("--causes: lease or read-only, not " + c);
      }
    }
    List<String> lines = new ArrayList<>();
    try (BenchServer server = BenchServer.of(serverOptions)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      Database db = server.createDatabase("bench_stepdown");
      QueueEngine engine = null;
      try {
        for (int i = 0; i < queues; i++) {
          db.exec(
              QueueConvention.createTableSql(
                  queue(i),
                  List.of("`payload` VARCHAR(32) NULL"),
                  "sluice_queue ack_wait=10m poll_interval=100ms"));
        }
        engine = engine(db);
        engine.start();
        for (int i = 0; i < queues; i++) {
          engine.subscribe(
              new HoldingOutlet(i + 1, 10_000, delivered, attached), queue(i), KeyRange.ALL);
        }
        engine.lead();
        ShardManager shard = engine.shards().get(0);
        Progress.note(
            String.format(
                Locale.ROOT,
                "stepdown: %d queues on shard %s, %d events held per queue, lease renewed every"
                    + " %d ms; %d rounds per cause",
                queues,
                SHARD,
                events,
                renewMs,
                rounds));
        for (String cause : causes) {
          List<double[]> got = new ArrayList<>();
          for (int r = 1; r <= rounds; r++) {
            Await.until(
                "the shard to be led with every queue serving", 120, 20, () -> serving(shard));
            hold(db, r);
            double[] t = stepDown(server, db, shard, cause);
            got.add(t);
            Progress.note(
                String.format(
                    Locale.ROOT,
                    "stepdown: %s round %d: detected after %.0f ms, stopped %.0f ms after"
                        + " detection (%.0f ms after the cause)",
                    cause,
                    r,
                    t[0],
                    t[1],
                    t[0] + t[1]));
          }
          lines.add(summary(cause, got));
        }
      } finally {
        if (engine != null) {
          engine.stop();
        }
        server.drop(db);
      }
    }
    lines.forEach(Progress::note);
    Machine.noteEnd();
    StringBuilder sb = new StringBuilder("stepdown: queues=" + queues);
    for (String l : lines) {
      sb.append(' ').append(l.substring(0, l.indexOf(' ')));
    }
    System.out.println(sb);
    return 0;
  }

  static String queue(int i) {
    return String.format(Locale.ROOT, "q%03d", i);
  }

  private EngineConfig config(Database db) {
    return EngineConfig.builder()
        .managerId("stepdown")
        .shards(List.of(new ShardConfig(SHARD, db.url(), db.user(), db.password(), 10)))
        .discoveryInterval(Duration.ofSeconds(1))
        .shutdownTimeout(Duration.ofSeconds(5))
        .leaseTtl(Duration.ofSeconds(10))
        .leaseRenew(Duration.ofMillis(renewMs))
        .forgetDelay(Duration.ofSeconds(1))
        .build();
  }

  private QueueEngine engine(Database db) {
    return new QueueEngine(config(db), Clock.systemUTC(), new SimpleMeterRegistry());
  }

  /** Led, every queue served, all their threads up, and every outlet attached. */
  private boolean serving(ShardManager shard) {
    return shard.leading()
        && shard.queues().size() == queues
        && workers() == queues * WORKERS_PER_QUEUE
        && attached.get() == queues;
  }

  /** Inserts {@link #events} due events in every queue and waits until the outlets hold them. */
  private void hold(Database db, int round) throws Exception {
    long before = delivered.get();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (int i = 0; i < queues; i++) {
        StringBuilder sb = new StringBuilder("INSERT INTO " + queue(i) + " (payload) VALUES ");
        for (int e = 0; e < events; e++) {
          sb.append(e == 0 ? "" : ",").append("('r").append(round).append("')");
        }
        s.execute(sb.toString());
      }
    }
    long want = before + (long) queues * events;
    Await.until("the outlets to hold the events", 120, 20, () -> delivered.get() >= want);
  }

  /**
   * Applies the cause, then returns {ms from the cause to the shard no longer leading, ms from that
   * to no worker thread left}; then undoes the cause.
   */
  private double[] stepDown(BenchServer server, Database db, ShardManager shard, String cause)
      throws Exception {
    long applied;
    if (cause.equals("lease")) {
      applied = System.nanoTime();
      // What another manager's take does: a new owner and token, and the fence row moved on.
      db.exec(
          "UPDATE sluice_lease SET owner = 'bench-thief', token = token + 1, expires_ns = "
              + QueueConvention.NOW_NS_SQL
              + " + 3600000000000 WHERE shard = '"
              + SHARD
              + "'");
      db.exec(
          "UPDATE sluice_fence f JOIN sluice_lease l ON l.shard = f.shard"
              + " SET f.owner = l.owner, f.token = l.token WHERE f.shard = '"
              + SHARD
              + "'");
    } else {
      applied = System.nanoTime();
      readOnly(server, true);
    }
    try {
      long detected = until(() -> !shard.leading(), applied);
      long stopped = until(() -> workers() == 0 && shard.queues().isEmpty(), detected);
      return new double[] {(detected - applied) / 1e6, (stopped - detected) / 1e6};
    } finally {
      if (cause.equals("lease")) {
        db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = '" + SHARD + "'");
      } else {
        readOnly(server, false);
      }
    }
  }

  private static void readOnly(BenchServer server, boolean on) throws SQLException {
    try (Connection c = server.connectServer();
        Statement s = c.createStatement()) {
      s.execute("SET GLOBAL read_only = " + (on ? 1 : 0));
    }
  }

  /** Polls {@code done} every half millisecond; the instant it first held (at most 60 s). */
  private static long until(BooleanSupplier done, long from) {
    long limit = from + 60_000_000_000L;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > limit) {
        throw new IllegalStateException("the shard did not step down within 60 s");
      }
      Thread.onSpinWait();
      try {
        Thread.sleep(0, 500_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    return System.nanoTime();
  }

  /** Live worker threads of the shard's queues (dispatcher, poller, firers, ack writer). */
  static int workers() {
    Thread[] all = new Thread[Thread.activeCount() + 256];
    int n = Thread.enumerate(all);
    int count = 0;
    for (int i = 0; i < n; i++) {
      if (all[i].getName().startsWith(WORKER_PREFIX) && all[i].isAlive()) {
        count++;
      }
    }
    return count;
  }

  /** "lease_lost_stop_ms=min/median/max ..." for one cause (the first word is the figure). */
  private static String summary(String cause, List<double[]> got) {
    List<Double> stop = new ArrayList<>();
    List<Double> detect = new ArrayList<>();
    List<Double> total = new ArrayList<>();
    for (double[] t : got) {
      detect.add(t[0]);
      stop.add(t[1]);
      total.add(t[0] + t[1]);
    }
    String name = cause.equals("lease") ? "lease_lost" : "read_only";
    return String.format(
        Locale.ROOT,
        "%s_stop_ms=%s (from detection; detection after the cause: %s ms; cause to stopped: %s"
            + " ms; min/median/max of %d rounds)",
        name,
        mmm(stop),
        mmm(detect),
        mmm(total),
        got.size());
  }

  private static String mmm(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    Collections.sort(s);
    return String.format(
        Locale.ROOT, "%.0f/%.0f/%.0f", s.get(0), s.get(s.size() / 2), s.get(s.size() - 1));
  }
}
