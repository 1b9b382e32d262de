package dev.sluice.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.JdbcEventStore;
import io.micrometer.core.instrument.Timer;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code backlog}: a queue with many pending rows due in the future. The manager must neither hold
 * them in memory nor pay more per poll as they grow: heap after GC and poll time, at 10k rows and
 * at the full size.
 */
@Command(
    name = "backlog",
    mixinStandardHelpOptions = true,
    description = {
      "Many pending future rows; the manager's heap after GC and its poll time at 10k and full.",
      "Ends with: backlog: rows=.. heap_mb_10k=.. heap_mb_full=.. poll_ms_10k=.. poll_ms_full=.."
    })
final class BacklogCommand implements Callable<Integer> {
  private static final long SMALL = 10_000;

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
      names = "--rows",
      defaultValue = "10000000",
      description = "Pending future rows at full size. Default: ${DEFAULT-VALUE}")
  long rows;

  @Option(
      names = "--chunk",
      defaultValue = "200000",
      description = "Rows per INSERT ... SELECT while growing. Default: ${DEFAULT-VALUE}")
  int chunk;

  @Option(
      names = "--window-seconds",
      defaultValue = "5",
      description = "How long each measurement watches the poller. Default: ${DEFAULT-VALUE}")
  double windowSeconds;

  record Sample(double heapMb, double pollMs, double pollMaxMs, double selfPollMs) {}

  @Override
  public Integer call() throws Exception {
    SluiceSide.useOptions(queueOptions);
    if (rows < SMALL) {
      throw new IllegalArgumentException("--rows must be at least " + SMALL);
    }
    Sample small;
    Sample full;
    try (BenchServer server = BenchServer.of(serverOptions)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      Database db = server.createDatabase("bench_backlog");
      try (SluiceSide s = new SluiceSide(db);
          HikariDataSource probePool = db.pool("backlog-probe", 2)) {
        s.createQueue();
        // Due in a day and later: pending, never due during the run.
        DrainCommand.load(
            "backlog 10k", SMALL, p -> s.insertRows(SMALL, TimeUnit.DAYS.toNanos(1), 1_000, p));
        QueueManager q = s.startManager(10);
        s.startReceivers(1, 4, 64, due -> {});
        JdbcEventStore probe = new JdbcEventStore(probePool, q.table());
        small = measure("10k", s, q, probe);
        grow(db, SMALL, rows);
        full = measure("full", s, q, probe);
        explain(db, probe, q);
        s.stopReceivers();
      } finally {
        server.drop(db);
      }
    }
    Progress.note(
        String.format(
            Locale.ROOT,
            "backlog: heap change %+.1f%%; poll max %.2f ms -> %.2f ms; self-timed poll median"
                + " %.2f ms -> %.2f ms",
            100 * (full.heapMb() - small.heapMb()) / small.heapMb(),
            small.pollMaxMs(),
            full.pollMaxMs(),
            small.selfPollMs(),
            full.selfPollMs()));
    Machine.noteEnd();
    System.out.println(
        String.format(
            Locale.ROOT,
            "backlog: rows=%d heap_mb_10k=%.1f heap_mb_full=%.1f poll_ms_10k=%.2f poll_ms_full=%.2f",
            rows,
            small.heapMb(),
            full.heapMb(),
            small.pollMs(),
            full.pollMs()));
    return 0;
  }

  /**
   * Watches the manager's {@code sluice_poll_duration} timer for a window, times 20 polls of its
   * own with the same store, then measures the heap after a full GC.
   */
  private Sample measure(String label, SluiceSide s, QueueManager q, JdbcEventStore probe)
      throws Exception {
    Timer timer = s.registry.find("sluice.poll.duration").timer();
    Thread.sleep(1000);
    long c0 = timer.count();
    double t0 = timer.totalTime(TimeUnit.MILLISECONDS);
    try (Progress p =
        Progress.start(
            "backlog " + label,
            () ->
                String.format(
                    Locale.ROOT,
                    "watching the poller: %d polls, window=%d",
                    timer.count() - c0,
                    q.live().cached()))) {
      Thread.sleep((long) (windowSeconds * 1000));
    }
    long polls = timer.count() - c0;
    double pollMs = polls == 0 ? Double.NaN : (timer.totalTime(TimeUnit.MILLISECONDS) - t0) / polls;
    double[] self = new double[20];
    for (int i = 0; i < self.length; i++) {
      long a = System.nanoTime();
      probe.pollPending(q.nowNs() + 200_000_000L, 10_000);
      self[i] = (System.nanoTime() - a) / 1e6;
    }
    Arrays.sort(self);
    double heap = heapAfterGcMb();
    Progress.note(
        String.format(
            Locale.ROOT,
            "backlog at %s: heap after GC %.1f MB; manager polls in %.0f s: %d, mean %.2f ms;"
                + " window=%d; self-timed poll median %.2f ms",
            label,
            heap,
            windowSeconds,
            polls,
            pollMs,
            q.live().cached(),
            self[self.length / 2]));
    return new Sample(heap, pollMs, timer.max(TimeUnit.MILLISECONDS), self[self.length / 2]);
  }

  private static double heapAfterGcMb() throws InterruptedException {
    var mem = ManagementFactory.getMemoryMXBean();
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(200);
    }
    return mem.getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
  }

  /** Doubles the table with INSERT ... SELECT in chunks until it holds {@code target} rows. */
  private void grow(Database db, long have, long target) throws Exception {
    AtomicLong total = new AtomicLong(have);
    long t0 = System.nanoTime();
    try (Connection c = db.connect();
        Progress p =
            Progress.start(
                "backlog load",
                () -> {
                  double s = (System.nanoTime() - t0) / 1e9;
                  return String.format(
                      Locale.ROOT,
                      "rows=%,d/%,d (%,.0f rows/s)",
                      total.get(),
                      target,
                      (total.get() - have) / s);
                })) {
      c.setAutoCommit(true);
      String sql =
          "INSERT INTO "
              + SluiceSide.QUEUE
              + " (time_next, time_created, payload) SELECT time_next + ?, time_created, payload"
              + " FROM "
              + SluiceSide.QUEUE
              + " WHERE id >= ? ORDER BY id LIMIT ?";
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        while (total.get() < target) {
          long maxId;
          try (Statement st = c.createStatement();
              ResultSet rs = st.executeQuery("SELECT MAX(id) FROM " + SluiceSide.QUEUE)) {
            rs.next();
            maxId = rs.getLong(1);
          }
          for (long from = 1; from <= maxId && total.get() < target; ) {
            long take = Math.min(chunk, target - total.get());
            ps.setLong(1, total.get()); // keeps time_next distinct, still a day away
            ps.setLong(2, from);
            ps.setLong(3, take);
            total.addAndGet(ps.executeUpdate());
            from += take;
          }
        }
      }
    }
    double s = (System.nanoTime() - t0) / 1e9;
    Progress.note(
        String.format(Locale.ROOT, "backlog: grew to %,d rows in %.0f s", total.get(), s));
  }

  /** Shows that the poll's plan uses the (state, time_next) index at full size. */
  private static void explain(Database db, JdbcEventStore probe, QueueManager q) throws Exception {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("EXPLAIN " + probe.pollSql(q.nowNs() + 200_000_000L, 10_000))) {
      ResultSetMetaData md = rs.getMetaData();
      while (rs.next()) {
        StringBuilder sb = new StringBuilder("backlog: EXPLAIN poll:");
        for (int i = 1; i <= md.getColumnCount(); i++) {
          sb.append(' ').append(md.getColumnLabel(i)).append('=').append(rs.getString(i));
        }
        Progress.note(sb.toString());
      }
    }
    Progress.note("backlog: index " + QueueConvention.POLL_INDEX + " is (state, time_next)");
  }
}
