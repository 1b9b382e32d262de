package dev.sluice.bench;

import dev.sluice.core.EngineConfig;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.KeyRange;
import dev.sluice.db.QueueConvention;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code handover}: two managers ({@code a} and {@code b}, in-process engines with the default
 * lease timing) share two shards under a steady load of due events; each acks what it is given at
 * once ({@link AckingOutlet}). Each round stops {@code a} gracefully (its shard moves to {@code
 * b}), then starts {@code a} again, which takes its share back from {@code b}: the planned
 * hand-over. The figure is each moved shard's longest pause between two deliveries around the move
 * ({@link DeliveryGaps}), beside the longest pause of the same shard in a quiet second before.
 *
 * <p>Threads: the command's thread runs the rounds; a producer thread inserts; the engines' threads
 * deliver; each outlet acks on a thread of its own.
 */
@Command(
    name = "handover",
    mixinStandardHelpOptions = true,
    description = {
      "Two managers, two shards, a steady load: a manager stops gracefully and comes back;",
      "the longest pause of deliveries of each moved shard.",
      "Ends with: handover: rounds=N stop_pause_ms=min/median/max"
          + " takeback_pause_ms=min/median/max steady_gap_ms=max"
    })
final class HandoverCommand implements Callable<Integer> {
  static final String QUEUE = "q";
  static final List<String> SHARDS = List.of("s0", "s1");

  @Mixin ServerOptions serverOptions;

  @Option(names = "--rounds", defaultValue = "4", description = "Default: ${DEFAULT-VALUE}")
  int rounds;

  @Option(
      names = "--rate",
      defaultValue = "500",
      description = "Events per second in all (half per shard). Default: ${DEFAULT-VALUE}")
  int rate;

  @Option(
      names = "--lease-ttl-ms",
      defaultValue = "2000",
      description = "The lease's ttl (the manager's default). Default: ${DEFAULT-VALUE}")
  long ttlMs;

  @Option(
      names = "--lease-renew-ms",
      defaultValue = "500",
      description = "How often leases are renewed (the default). Default: ${DEFAULT-VALUE}")
  long renewMs;

  private final DeliveryGaps gaps = new DeliveryGaps();
  private final List<Database> dbs = new ArrayList<>();

  @Override
  public Integer call() throws Exception {
    List<Double> stops = new ArrayList<>();
    List<Double> takebacks = new ArrayList<>();
    double steady = 0;
    try (BenchServer server = BenchServer.of(serverOptions)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      for (String s : SHARDS) {
        Database db = server.createDatabase("bench_handover_" + s);
        db.exec(
            QueueConvention.createTableSql(
                QUEUE, List.of("`payload` VARCHAR(32) NULL"), SluiceSide.COMMENT));
        dbs.add(db);
      }
      AtomicBoolean producing = new AtomicBoolean(true);
      Thread producer = new Thread(() -> produce(producing), "bench-producer");
      QueueEngine a = start("a");
      QueueEngine b = start("b");
      try {
        producer.start();
        Await.until("each manager to lead one shard", 30, 5, () -> leads(a) == 1 && leads(b) == 1);
        QueueEngine current = a;
        for (int r = 1; r <= rounds; r++) {
          Thread.sleep(1000);
          gaps.reset();
          Thread.sleep(1000);
          String moved = ledShard(current);
          steady = Math.max(steady, gaps.longestMs(moved));
          // A graceful stop: the shard moves to b.
          gaps.reset();
          current.stop();
          Await.until("b to lead both shards", 30, 5, () -> leads(b) == 2);
          Thread.sleep(1000);
          double stop = gaps.longestMs(moved);
          // The restart: a new process with the same id takes its share back from b.
          gaps.reset();
          current = start("a");
          QueueEngine back = current;
          Await.until("a to lead one shard again", 30, 5, () -> leads(back) == 1);
          Thread.sleep(1000);
          String taken = ledShard(back);
          double takeback = gaps.longestMs(taken);
          stops.add(stop);
          takebacks.add(takeback);
          Progress.note(
              String.format(
                  Locale.ROOT,
                  "handover: round %d: %s stopped, longest pause of %s %.0f ms; a back, longest"
                      + " pause of %s %.0f ms (steady before: %.0f ms)",
                  r,
                  moved,
                  moved,
                  stop,
                  taken,
                  takeback,
                  steady));
        }
        producing.set(false);
        producer.join();
        current.stop();
      } finally {
        producing.set(false);
        b.stop();
        a.stop();
        for (Database db : dbs) {
          server.drop(db);
        }
      }
    }
    Machine.noteEnd();
    System.out.printf(
        Locale.ROOT,
        "handover: rounds=%d stop_pause_ms=%s takeback_pause_ms=%s steady_gap_ms=%.0f%n",
        rounds,
        mmm(stops),
        mmm(takebacks),
        steady);
    return 0;
  }

  private QueueEngine start(String id) {
    List<ShardConfig> shards = new ArrayList<>();
    for (int i = 0; i < SHARDS.size(); i++) {
      Database db = dbs.get(i);
      shards.add(new ShardConfig(SHARDS.get(i), db.url(), db.user(), db.password(), 5));
    }
    EngineConfig config =
        EngineConfig.builder()
            .managerId(id)
            .shards(shards)
            .leaseTtl(Duration.ofMillis(ttlMs))
            .leaseRenew(Duration.ofMillis(renewMs))
            .build();
    QueueEngine e = new QueueEngine(config, Clock.systemUTC(), new SimpleMeterRegistry());
    e.start();
    e.subscribe(new AckingOutlet("outlet-" + id, e, QUEUE, 100_000, gaps), QUEUE, KeyRange.ALL);
    e.lead();
    return e;
  }

  private static int leads(QueueEngine e) {
    int n = 0;
    for (ShardManager s : e.shards()) {
      if (s.leading() && s.queue(QUEUE) != null) {
        n++;
      }
    }
    return n;
  }

  private static String ledShard(QueueEngine e) {
    for (ShardManager s : e.shards()) {
      if (s.leading()) {
        return s.config().name();
      }
    }
    throw new IllegalStateException("the manager leads no shard");
  }

  /** Inserts {@link #rate} events a second, spread over both shards, every 10 ms a few. */
  private void produce(AtomicBoolean producing) {
    List<Connection> cs = new ArrayList<>();
    try {
      List<PreparedStatement> inserts = new ArrayList<>();
      for (Database db : dbs) {
        Connection c = db.connect();
        cs.add(c);
        inserts.add(c.prepareStatement("INSERT INTO " + QUEUE + " (payload) VALUES ('h')"));
      }
      long perTick = Math.max(1, rate / 100 / SHARDS.size());
      long next = System.nanoTime();
      while (producing.get()) {
        for (PreparedStatement ps : inserts) {
          for (int i = 0; i < perTick; i++) {
            ps.addBatch();
          }
          ps.executeBatch();
        }
        next += TimeUnit.MILLISECONDS.toNanos(10);
        long sleep = next - System.nanoTime();
        if (sleep > 0) {
          TimeUnit.NANOSECONDS.sleep(sleep);
        }
      }
    } catch (Exception e) {
      Progress.note("handover: the producer stopped: " + e);
    } finally {
      for (Connection c : cs) {
        try {
          c.close(); // closes its statement too
        } catch (Exception ignored) {
          // closing anyway
        }
      }
    }
  }

  private static String mmm(List<Double> v) {
    if (v.isEmpty()) {
      return "-";
    }
    List<Double> s = new ArrayList<>(v);
    Collections.sort(s);
    return String.format(
        Locale.ROOT, "%.0f/%.0f/%.0f", s.get(0), s.get(s.size() / 2), s.get(s.size() - 1));
  }
}
