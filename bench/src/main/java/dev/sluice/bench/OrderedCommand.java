package dev.sluice.bench;

import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.QueueConvention;
import io.micrometer.core.instrument.Counter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ordered}: what ordered delivery ({@code ordering=key}) costs. Four phases, each on a fresh
 * database of the same server and the same table (an {@code ordering_key} column and its {@code
 * sluice_ordering} index; only the comment says whether the queue is ordered):
 *
 * <ul>
 *   <li>{@code unordered} and {@code drain}: K keys x M events due now (keys interleaved, as
 *       applications write them), drained as in {@code drain}, unordered then ordered;
 *   <li>{@code solo}: a steady trickle over the K quiet keys (one event per transaction), ordered;
 *   <li>{@code hot}: the same trickle beside one hot key's backlog, inserted first; the manager
 *       starts without receivers and holds the backlog (the counter {@code sluice_ordering_held}
 *       stops moving) before the trickle starts and the measured seconds begin.
 * </ul>
 *
 * Rows read per delivered event come from {@code SHOW GLOBAL STATUS} deltas ({@code
 * Innodb_rows_read}, {@code Handler_read_*}): over the whole drain, and over the measured seconds
 * of the trickle phases. The receivers check each key's events arrive in id order.
 *
 * <p>Threads: the command's own thread runs the phases; the receivers' handler threads record
 * latencies and order (thread-safe {@link Latencies} and {@link KeyOrder}); a producer thread runs
 * the trickle.
 */
@Command(
    name = "ordered",
    mixinStandardHelpOptions = true,
    description = {
      "Ordered delivery (ordering=key): the drain's events/s against the same events unordered;",
      "quiet keys' due->delivered p99 beside a hot key's held backlog against the trickle alone;",
      "rows read per delivered event (SHOW GLOBAL STATUS deltas).",
      "Ends with: ordered: drain=X/s unordered=Y/s drain_ratio=X/Y quiet_p99_ms=A solo_p99_ms=B"
          + " p99_ratio=A/B hot_rate=H/s rows_per_event=R solo_rows_per_event=S"
          + " drain_rows_per_event=D unordered_rows_per_event=U"
    })
final class OrderedCommand implements Callable<Integer> {
  @Mixin ServerOptions serverOptions;

  @Option(
      names = "--queue-options",
      defaultValue = "",
      description =
          "Queue options replacing the defaults in every phase (default: "
              + SluiceSide.COMMENT
              + "; the ordered phases add ordering=key)")
  String queueOptions;

  @Option(
      names = "--key-limit",
      defaultValue = "0",
      description =
          "Run the limited phases with key_max_in_flight=N (concurrency per key, any order)"
              + " instead of ordering=key: what a keyed concurrency limit costs against the same"
              + " queue without it. Default: 0 (ordering=key)")
  int keyLimit;

  /** What the limited phases add to the comment. */
  private String limited() {
    return keyLimit > 0 ? " key_max_in_flight=" + keyLimit : " ordering=key";
  }

  @Option(
      names = "--quick",
      description =
          "About a minute: --per-key 20 --backlog 20000 --warmup 3 --seconds 10 unless given")
  boolean quick;

  @Option(
      names = "--keys",
      defaultValue = "1000",
      description = "Keys of the drain, and quiet keys of the trickle. Default: ${DEFAULT-VALUE}")
  int keys;

  @Option(names = "--per-key", description = "Drain events per key. Default: 50 (--quick 20)")
  Integer perKey;

  @Option(names = "--backlog", description = "The hot key's backlog. Default: 100000")
  Long backlog;

  @Option(
      names = "--quiet-rate",
      defaultValue = "300",
      description = "Events/s of the trickle, over all quiet keys. Default: ${DEFAULT-VALUE}")
  double quietRate;

  @Option(names = "--seconds", description = "Measured seconds per trickle phase. Default: 20")
  Double seconds;

  @Option(names = "--warmup", description = "Trickle seconds before measuring. Default: 5")
  Double warmup;

  @Option(
      names = "--drain-warmup",
      description =
          "Events per key of two untimed drains, one unordered and one ordered, before the"
              + " measured drains: both are then measured with the JIT warmed the same way, as"
              + " drain warms every peer. Default: a tenth of --per-key, at least 2; 0: none")
  Integer drainWarmup;

  @Option(
      names = "--producers",
      defaultValue = "3",
      description = "Trickle producer threads (a connection each). Default: ${DEFAULT-VALUE}")
  int producers;

  @Option(names = "--receivers", defaultValue = "4", description = "Default: ${DEFAULT-VALUE}")
  int receivers;

  @Option(
      names = "--concurrency",
      defaultValue = "4",
      description = "Handler threads per receiver. Default: ${DEFAULT-VALUE}")
  int concurrency;

  @Option(
      names = "--drain-max-in-flight",
      defaultValue = "256",
      description = "Credits per receiver in the drains (as drain). Default: ${DEFAULT-VALUE}")
  int drainMaxInFlight;

  @Option(
      names = "--max-in-flight",
      defaultValue = "64",
      description =
          "Credits per receiver in the trickle phases (as steady). Default: ${DEFAULT-VALUE}")
  int maxInFlight;

  @Option(
      names = "--pool-size",
      defaultValue = "10",
      description = "The manager's connections to the shard. Default: ${DEFAULT-VALUE}")
  int poolSize;

  @Option(
      names = "--settle",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description =
          "Have the server write the pages a phase's bulk load dirtied before its manager starts"
              + " (see fairness). Default: settle")
  boolean settle;

  @Option(
      names = "--phases",
      split = ",",
      defaultValue = "unordered,drain,solo,hot",
      description =
          "Phases to run (unordered, drain, solo, hot); figures of phases left out print as n/a."
              + " Default: ${DEFAULT-VALUE}")
  Set<String> phases;

  /** A drain's figures. */
  record Drain(double rate, double rowsPerEvent, long outOfOrder) {}

  /** A trickle phase's figures; {@code rowsPerEvent} over the measured seconds. */
  record Trickle(Histogram quiet, double rowsPerEvent, double hotRate, long outOfOrder) {}

  private CpuMeter cpu;

  @Override
  public Integer call() throws Exception {
    int m = perKey != null ? perKey : quick ? 20 : 50;
    long backlogN = backlog != null ? backlog : quick ? 20_000 : 100_000;
    double secs = seconds != null ? seconds : quick ? 10 : 20;
    double warm = warmup != null ? warmup : quick ? 3 : 5;
    Set<String> known = Set.of("unordered", "drain", "solo", "hot");
    if (!known.containsAll(phases)) {
      throw new IllegalArgumentException(
          "--phases takes unordered, drain, solo and hot; unknown: "
              + phases.stream().filter(x -> !known.contains(x)).toList());
    }
    Drain unordered = null;
    Drain ordered = null;
    Trickle solo = null;
    Trickle hot = null;
    try (BenchServer server = BenchServer.of(serverOptions);
        ServerStatus status = new ServerStatus(server)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      cpu = new CpuMeter(server);
      Progress.note(
          String.format(
              Locale.ROOT,
              "ordered: drain of %,d keys x %d events (%,d, keys interleaved, due now), %d"
                  + " receivers x %d threads, %d credits each; trickle of %.0f events/s over %,d"
                  + " quiet keys (%d producer threads, one event per transaction), %d credits"
                  + " each, %.0f s warm-up + %.0f s measured, alone and beside a hot key's"
                  + " backlog of %,d; queue '%s' (+%s)",
              keys,
              m,
              (long) keys * m,
              receivers,
              concurrency,
              drainMaxInFlight,
              quietRate,
              keys,
              producers,
              maxInFlight,
              warm,
              secs,
              backlogN,
              SluiceSide.useOptions(queueOptions),
              limited()));
      int w = drainWarmup != null ? drainWarmup : Math.max(2, m / 10);
      if (w > 0 && (phases.contains("unordered") || phases.contains("drain"))) {
        Progress.note(
            String.format(
                Locale.ROOT,
                "warm-up: an unordered and an ordered drain of %,d events each first, not counted",
                (long) keys * w));
        runDrain(server, status, "warmup_unordered", false, w);
        runDrain(server, status, "warmup_ordered", true, w);
        pause();
      }
      if (phases.contains("unordered")) {
        unordered = runDrain(server, status, "unordered", false, m);
        pause();
      }
      if (phases.contains("drain")) {
        ordered = runDrain(server, status, "drain", true, m);
        pause();
      }
      if (phases.contains("solo")) {
        solo = runTrickle(server, status, "solo", 0, warm, secs);
        pause();
      }
      if (phases.contains("hot")) {
        hot = runTrickle(server, status, "hot", backlogN, warm, secs);
      }
    }
    double a = hot == null ? Double.NaN : Latencies.ms(hot.quiet(), 99);
    double b = solo == null ? Double.NaN : Latencies.ms(solo.quiet(), 99);
    Machine.noteEnd();
    System.out.println(
        String.format(
            Locale.ROOT,
            "ordered: drain=%s unordered=%s drain_ratio=%s quiet_p99_ms=%s solo_p99_ms=%s"
                + " p99_ratio=%s hot_rate=%s rows_per_event=%s solo_rows_per_event=%s"
                + " drain_rows_per_event=%s unordered_rows_per_event=%s",
            DrainCommand.rate(ordered == null ? Double.NaN : ordered.rate()),
            DrainCommand.rate(unordered == null ? Double.NaN : unordered.rate()),
            DrainCommand.ratio(
                ordered == null ? Double.NaN : ordered.rate(),
                unordered == null ? Double.NaN : unordered.rate()),
            fmt(a),
            fmt(b),
            fmt(a / b),
            DrainCommand.rate(hot == null ? Double.NaN : hot.hotRate()),
            fmt(hot == null ? Double.NaN : hot.rowsPerEvent()),
            fmt(solo == null ? Double.NaN : solo.rowsPerEvent()),
            fmt(ordered == null ? Double.NaN : ordered.rowsPerEvent()),
            fmt(unordered == null ? Double.NaN : unordered.rowsPerEvent())));
    return 0;
  }

  static String fmt(double v) {
    return Double.isNaN(v) || Double.isInfinite(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
  }

  /** The next phase starts on an even footing. */
  private static void pause() throws InterruptedException {
    System.gc();
    Thread.sleep(1000);
  }

  /** The key of the hot backlog: past the quiet keys 0..keys-1. */
  private long hotKey() {
    return keys;
  }

  private Drain runDrain(
      BenchServer server, ServerStatus status, String label, boolean ordered, int m)
      throws Exception {
    String comment = SluiceSide.useOptions(queueOptions + (ordered ? limited() : ""));
    long n = (long) keys * m;
    Database db = server.createDatabase("bench_ordered_" + label);
    KeyOrder order = new KeyOrder(keys + 1);
    AtomicLong delivered = new AtomicLong();
    try (SluiceSide s = new SluiceSide(db)) {
      s.createOrderedQueue();
      QueueManager q = s.startManager(poolSize);
      s.setPaused(true);
      s.startHandlers(
          receivers,
          concurrency,
          drainMaxInFlight,
          e -> {
            order.saw(e.getLong(QueueConvention.ORDERING_KEY), e.id());
            delivered.incrementAndGet();
          });
      DrainCommand.load(label, n, p -> insertKeyed(db, n, i -> i % keys, p));
      Progress.note(label + ": queue '" + comment + "' paused with the events loaded; resuming");
      Counter ackedCounter = s.counterOf("sluice.events.acked");
      if (ackedCounter.count() > 0) {
        throw new IllegalStateException(
            label + ": " + ackedCounter.count() + " events were acked while the queue was paused");
      }
      Map<String, Long> before = status.read();
      cpu.start();
      long t0 = System.nanoTime();
      s.setPaused(false);
      LongSupplier acked = () -> (long) ackedCounter.count();
      double rate =
          DrainCommand.await(
              label,
              n,
              acked,
              t0,
              () -> {
                QueueManager.LiveStats live = q.live();
                return String.format(
                    Locale.ROOT,
                    "delivered=%,d window=%,d in_flight=%,d%s",
                    delivered.get(),
                    live.cached(),
                    live.inFlight(),
                    ordered ? " " + orderingCounters(s) : "");
              });
      ServerStatus.Delta d = ServerStatus.Delta.between(before, status.read());
      Progress.note(label + ": CPU per event: " + cpu.perEvent(n));
      Progress.note(label + ": statements per event: " + d.perEvent(n));
      Progress.note(label + ": rows read per event: " + d.readsPerEvent(n));
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: %,d deliveries; %,d arrived before an earlier id of their key%s",
              label,
              delivered.get(),
              order.outOfOrder(),
              ordered ? "; " + orderingCounters(s) : ""));
      s.stopReceivers();
      return new Drain(rate, d.rowsReadPerEvent(n), order.outOfOrder());
    } finally {
      server.drop(db);
    }
  }

  private static String orderingCounters(SluiceSide s) {
    return String.format(
        Locale.ROOT,
        "held=%,.0f released=%,.0f",
        s.counterOf("sluice.ordering.held").count(),
        s.counterOf("sluice.ordering.released").count());
  }

  private Trickle runTrickle(
      BenchServer server,
      ServerStatus status,
      String label,
      long backlogN,
      double warm,
      double secs)
      throws Exception {
    String comment = SluiceSide.useOptions(queueOptions + limited());
    Progress.note(label + ": fresh queue '" + comment + "', hot backlog " + backlogN);
    Database db = server.createDatabase("bench_ordered_" + label);
    Latencies lat = new Latencies();
    KeyOrder order = new KeyOrder(keys + 1);
    AtomicLong hotDelivered = new AtomicLong();
    long hot = hotKey();
    try (SluiceSide s = new SluiceSide(db)) {
      s.createOrderedQueue();
      if (backlogN > 0) {
        DrainCommand.load(
            label + " backlog", backlogN, p -> insertKeyed(db, backlogN, i -> hot, p));
      }
      if (settle) {
        ServerSettle.settle(server, label, 30);
      }
      Map<String, Long> beforeHold = status.read();
      s.startManager(poolSize);
      if (backlogN > 0) {
        awaitHeld(label, s, db, backlogN, status, beforeHold);
      }
      s.startHandlers(
          receivers,
          concurrency,
          maxInFlight,
          e -> {
            long now = Latencies.wallNanos();
            long key = e.getLong(QueueConvention.ORDERING_KEY);
            order.saw(key, e.id());
            if (key == hot) {
              hotDelivered.incrementAndGet();
            } else {
              lat.record(e.dueTimeNanos(), now);
            }
          });
      Producer producer =
          new Producer(
              db,
              "INSERT INTO "
                  + SluiceSide.QUEUE
                  + " ("
                  + QueueConvention.ORDERING_KEY
                  + ", payload) VALUES (?, ?)",
              (ps, i) -> {
                ps.setLong(1, i % keys);
                ps.setString(2, "q" + i);
              },
              producers);
      lat.recording(warm <= 0);
      AtomicReference<Exception> failed = new AtomicReference<>();
      Thread runner =
          new Thread(
              () -> {
                try {
                  producer.run(quietRate, warm + secs);
                } catch (Exception e) {
                  failed.set(e);
                }
              },
              "bench-trickle");
      runner.setDaemon(true);
      long t0 = System.nanoTime();
      long warmNs = (long) (warm * 1e9);
      long[] hotPrev = {0};
      Map<String, Long> before;
      long quietAt0;
      long hotAt0;
      long tA;
      try (Progress p =
          Progress.start(
              label,
              () -> {
                boolean measuring = System.nanoTime() - t0 >= warmNs;
                Histogram h = lat.interval();
                long hd = hotDelivered.get();
                String line =
                    String.format(
                        Locale.ROOT,
                        "%s quiet sent=%,d delivered=%,d last-second p50=%sms p99=%sms max=%sms;"
                            + " hot delivered=%,d (%,d/s) %s",
                        measuring ? "measuring" : "warm-up",
                        producer.sent(),
                        lat.count(),
                        fmt(Latencies.ms(h, 50)),
                        fmt(Latencies.ms(h, 99)),
                        fmt(Latencies.ms(h, 100)),
                        hd,
                        hd - hotPrev[0],
                        orderingCounters(s));
                hotPrev[0] = hd;
                return line;
              })) {
        runner.start();
        Thread.sleep(warmNs / 1_000_000);
        lat.recording(true);
        before = status.read();
        quietAt0 = lat.count();
        hotAt0 = hotDelivered.get();
        tA = System.nanoTime();
        runner.join();
      }
      Map<String, Long> after = status.read();
      double measured = (System.nanoTime() - tA) / 1e9;
      long quietIn = lat.count() - quietAt0;
      long hotIn = hotDelivered.get() - hotAt0;
      if (failed.get() != null) {
        throw new IllegalStateException(label + ": the trickle failed", failed.get());
      }
      awaitQuiet(label, producer, lat);
      Histogram h = lat.snapshot();
      ServerStatus.Delta d = ServerStatus.Delta.between(before, after);
      long deliveredIn = quietIn + hotIn;
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: quiet due->delivered over %,d events: p50=%sms p90=%sms p99=%sms p99.9=%sms"
                  + " max=%sms",
              label,
              h.getTotalCount(),
              fmt(Latencies.ms(h, 50)),
              fmt(Latencies.ms(h, 90)),
              fmt(Latencies.ms(h, 99)),
              fmt(Latencies.ms(h, 99.9)),
              fmt(Latencies.ms(h, 100))));
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: measured %.1f s: delivered %,d quiet (%.0f/s) + %,d hot (%.0f/s); per delivered"
                  + " event: %s; %s",
              label,
              measured,
              quietIn,
              quietIn / measured,
              hotIn,
              hotIn / measured,
              d.readsPerEvent(deliveredIn),
              d.perEvent(deliveredIn)));
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: %,d deliveries arrived before an earlier id of their key; %s; %s",
              label,
              order.outOfOrder(),
              orderingCounters(s),
              s.timerSummary("sluice.due.to.dispatch")));
      s.stopReceivers();
      return new Trickle(h, d.rowsReadPerEvent(deliveredIn), hotIn / measured, order.outOfOrder());
    } finally {
      server.drop(db);
    }
  }

  /**
   * Waits until the manager has held the hot backlog: its counter {@code sluice_ordering_held} has
   * reached every event but the key's head and stays there for 1 s, or (should the manager hold
   * fewer) has not moved for 10 s; then counts the held rows in the table, notes what holding read,
   * and what 2 s of idling with the backlog held read.
   */
  private static void awaitHeld(
      String label,
      SluiceSide s,
      Database db,
      long backlogN,
      ServerStatus status,
      Map<String, Long> beforeHold)
      throws Exception {
    long t0 = System.nanoTime();
    long deadline = t0 + 600_000_000_000L;
    double last = -1;
    long stableSince = System.nanoTime();
    try (Progress p =
        Progress.start(label + " hold", () -> "waiting for the backlog to be held: " + held(s))) {
      while (true) {
        double now = heldCount(s);
        long t = System.nanoTime();
        if (now != last) {
          last = now;
          stableSince = t;
        } else if (now >= backlogN - 1 && t - stableSince >= 1_000_000_000L) {
          break;
        } else if (now > 0 && t - stableSince >= 10_000_000_000L) {
          Progress.note(
              String.format(
                  Locale.ROOT,
                  "%s: WARNING the held count stopped at %,.0f of %,d for 10 s",
                  label,
                  now,
                  backlogN - 1));
          break;
        }
        if (t > deadline) {
          throw new IllegalStateException(
              label + ": the backlog was not held after 600 s: " + held(s));
        }
        Thread.sleep(100);
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    ServerStatus.Delta d = ServerStatus.Delta.between(beforeHold, status.read());
    long rows =
        db.queryLong(
            "SELECT COUNT(*) FROM " + SluiceSide.QUEUE + " WHERE state = ? AND time_next >= ?",
            dev.sluice.db.EventState.PENDING.code(),
            QueueConvention.HELD_NS);
    Progress.note(
        String.format(
            Locale.ROOT,
            "%s: settled in %.1f s (%s); held rows in the table: %,d of %,d; holding read per held"
                + " row: %s; %s",
            label,
            seconds,
            held(s),
            rows,
            backlogN,
            d.readsPerEvent(Math.max(1, rows)),
            d.perEvent(Math.max(1, rows))));
    Map<String, Long> idle = status.read();
    Thread.sleep(2000);
    ServerStatus.Delta i = ServerStatus.Delta.between(idle, status.read());
    Progress.note(
        String.format(
            Locale.ROOT,
            "%s: 2 s idle with the backlog held, no receivers: per second %s",
            label,
            i.readsPerEvent(2)));
  }

  private static double heldCount(SluiceSide s) {
    var c = s.registry.find("sluice.ordering.held").counter();
    return c == null ? 0 : c.count();
  }

  private static String held(SluiceSide s) {
    return String.format(Locale.ROOT, "sluice_ordering_held_total=%,.0f", heldCount(s));
  }

  private static void awaitQuiet(String label, Producer producer, Latencies lat)
      throws InterruptedException {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (lat.count() < producer.sent()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            label
                + ": only "
                + lat.count()
                + " of "
                + producer.sent()
                + " quiet events delivered 120 s after the trickle ended");
      }
      Thread.sleep(10);
    }
  }

  /**
   * Inserts {@code n} events with 100-row autocommit INSERTs; event {@code i} gets the ordering key
   * {@code keyOf(i)}.
   */
  static void insertKeyed(Database db, long n, LongUnaryOperator keyOf, LongConsumer progress)
      throws SQLException {
    int batch = 100;
    try (Connection c = db.connect()) {
      c.setAutoCommit(true);
      long done = 0;
      while (done < n) {
        int k = (int) Math.min(batch, n - done);
        StringBuilder sb =
            new StringBuilder(
                "INSERT INTO "
                    + SluiceSide.QUEUE
                    + " ("
                    + QueueConvention.ORDERING_KEY
                    + ", payload) VALUES ");
        for (int i = 0; i < k; i++) {
          sb.append(i == 0 ? "(?, ?)" : ",(?, ?)");
        }
        try (PreparedStatement ps = c.prepareStatement(sb.toString())) {
          int p = 1;
          for (int i = 0; i < k; i++) {
            ps.setLong(p++, keyOf.applyAsLong(done + i));
            ps.setString(p++, "e" + (done + i));
          }
          ps.executeUpdate();
        }
        done += k;
        progress.accept(done);
      }
    }
  }

  /** The last id delivered per key, from many handler threads: counts ids that came too late. */
  static final class KeyOrder {
    private final java.util.concurrent.atomic.AtomicLongArray last;
    private final AtomicLong outOfOrder = new AtomicLong();

    KeyOrder(int keys) {
      last = new java.util.concurrent.atomic.AtomicLongArray(keys);
    }

    void saw(long key, long id) {
      long prev = last.getAndAccumulate((int) key, id, Math::max);
      if (id < prev) {
        outOfOrder.incrementAndGet();
      }
    }

    long outOfOrder() {
      return outOfOrder.get();
    }
  }
}
