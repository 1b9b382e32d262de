package dev.sluice.examples.demo;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * {@code sluice demo --long}: jobs that take 2-10 times their queue's ack_wait, some snoozing
 * first, on one shard led by two manager processes, with a kill -9 of the leader and the abrupt
 * kill of a receiver in the middle. The receivers extend their jobs' deadlines while the handlers
 * work ({@code --no-auto-extend} turns that off, to show what it prevents).
 *
 * <p>The summary counts {@code duplicates_while_running} (a delivery of an event while a live
 * receiver's handler still runs it, {@link LongReceivers}) and {@code lost} (a job whose row is not
 * acked at the end, or that no handler finished); the exit code is 1 unless both are zero.
 */
final class LongRun {
  static final String QUEUE = "long_events";

  /** The queue's ack_wait (its comment in db/demo-long): the jobs work 2 to 10 times this. */
  static final Duration ACK_WAIT = Duration.ofSeconds(2);

  private static final int MANAGERS = 2;

  private final PrintWriter out;
  private final PrintWriter err;
  private final int jobs;
  private final int rate;
  private final long seed;
  private final boolean autoExtend;
  private final int timeoutSeconds;

  LongRun(
      PrintWriter out,
      PrintWriter err,
      int jobs,
      int rate,
      long seed,
      boolean autoExtend,
      int timeoutSeconds) {
    this.out = out;
    this.err = err;
    this.jobs = jobs;
    this.rate = rate;
    this.seed = seed;
    this.autoExtend = autoExtend;
    this.timeoutSeconds = timeoutSeconds;
  }

  /** Runs it all; prints the summary line last on {@code out}; returns the exit code. */
  int call() throws Exception {
    long startNs = System.nanoTime();
    err.println("demo: starting an embedded MariaDB (the first run unpacks it)...");
    err.flush();
    long lost;
    long failovers;
    long maxGapMs;
    LongReceivers receivers;
    try (DemoDatabase db = DemoDatabase.startLong()) {
      DemoDatabase.Shard shard = db.shards().get(0);
      Path logs = Files.createTempDirectory("sluice-demo-");
      try (DemoManagers procs = new DemoManagers(db.shards(), MANAGERS, logs)) {
        err.printf(
            "demo: MariaDB on port %d; starting %d manager processes (configs and logs in %s)...%n",
            db.port(), MANAGERS, logs);
        err.flush();
        procs.startAll();
        LeaseWatch watch = new LeaseWatch(db, procs::alive).start();
        if (!watch.awaitSpread(1, 30_000)) {
          err.println("demo: no manager took the shard's lease within 30 s; going on anyway");
        }
        watch.baseline();
        err.printf(
            "demo: %d jobs at %d/s into %s (ack_wait %d s; each works %d-%d s, some wait"
                + " first); automatic extension %s; seed %d; leader %s%n",
            jobs,
            rate,
            QUEUE,
            ACK_WAIT.toSeconds(),
            2 * ACK_WAIT.toSeconds(),
            10 * ACK_WAIT.toSeconds(),
            autoExtend ? "on" : "OFF (--no-auto-extend)",
            seed,
            watch.leaders());
        err.flush();
        receivers = new LongReceivers(procs.targets(), autoExtend);
        try {
          receivers.start();
          LongReceivers rs = receivers;
          try (Progress progress =
              new Progress(
                      out,
                      () ->
                          String.format(
                              "jobs=%d running=%d finished=%d snoozes=%d extended=%d"
                                  + " duplicates_while_running=%d receivers=%d leaders=%s",
                              jobs,
                              rs.running(),
                              rs.completed().size(),
                              rs.snoozes(),
                              rs.extendedRuns(),
                              rs.duplicatesWhileRunning(),
                              rs.liveCount(),
                              watch.leaders()))
                  .start()) {
            try {
              produceWithKills(shard, procs, watch, progress, receivers);
              if (!awaitFinished(shard, progress)) {
                // Given up: the jobs still running would hold the receivers' graceful close (up
                // to 25 s) for nothing.
                receivers.abort();
              }
            } finally {
              watch.close();
            }
            failovers = watch.failovers();
            maxGapMs = watch.maxGapMs();
          }
        } finally {
          receivers.close();
        }
      } // managers stop here
      lost = lost(shard, receivers);
    } // the database stops last
    long dups = receivers.duplicatesWhileRunning();
    err.printf(
        "demo: %d jobs; handlers ran %d times (%d snoozed); %d finished runs had their deadline"
            + " extended; %d failovers, longest %d ms; %d events delivered again while a live"
            + " receiver still ran them%s; took %.1f s%n",
        jobs,
        receivers.deliveries(),
        receivers.snoozes(),
        receivers.extendedRuns(),
        failovers,
        maxGapMs,
        dups,
        dups == 0 ? "" : " (ids " + sample(receivers) + ")",
        (System.nanoTime() - startNs) / 1e9);
    out.printf(
        "demo: long jobs=%d finished=%d snoozes=%d extended=%d failovers=%d receiver_kills=1"
            + " duplicates_while_running=%d lost=%d%n",
        jobs,
        receivers.completed().size(),
        receivers.snoozes(),
        receivers.extendedRuns(),
        failovers,
        dups,
        lost);
    out.flush();
    return dups == 0 && lost == 0 ? 0 : 1;
  }

  /**
   * Inserts the jobs at the rate; a third of the way kills the leader (kill -9) and starts it again
   * 3 s later, two thirds of the way kills a receiver and replaces it.
   */
  private void produceWithKills(
      DemoDatabase.Shard shard,
      DemoManagers procs,
      LeaseWatch watch,
      Progress progress,
      LongReceivers receivers)
      throws Exception {
    Random random = new Random(seed);
    long periodNs = TimeUnit.SECONDS.toNanos(1) / Math.max(1, rate);
    long next = System.nanoTime();
    DemoManagers.Manager killed = null;
    long restartAt = 0;
    try (Connection c = shard.pool().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO " + QUEUE + " (job_no, work_ms, snoozes_wanted) VALUES (?, ?, ?)")) {
      c.setAutoCommit(false);
      for (int i = 1; i <= jobs; i++) {
        long workMs = ACK_WAIT.toMillis() * 2 + random.nextInt((int) ACK_WAIT.toMillis() * 8);
        double r = random.nextDouble();
        int snoozes = r < 0.1 ? 4 : r < 0.35 ? 1 : 0;
        ps.setInt(1, i);
        ps.setLong(2, workMs);
        ps.setInt(3, snoozes);
        ps.executeUpdate();
        c.commit();
        if (i == jobs / 3) {
          killed = killLeader(procs, watch, progress);
          restartAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        }
        if (killed != null && System.nanoTime() >= restartAt) {
          restart(procs, killed, progress);
          killed = null;
        }
        if (i == 2 * jobs / 3) {
          progress.note("killing receiver long-doomed (abort: its handlers' acks are lost)");
          receivers.killAndReplace(Duration.ofSeconds(1));
          progress.note("its replacement long-replacement subscribed");
        }
        next += periodNs;
        long sleepNs = next - System.nanoTime();
        if (sleepNs > 0) {
          TimeUnit.NANOSECONDS.sleep(sleepNs);
        }
      }
    }
    if (killed != null) {
      TimeUnit.NANOSECONDS.sleep(Math.max(0, restartAt - System.nanoTime()));
      restart(procs, killed, progress);
    }
  }

  private DemoManagers.Manager killLeader(DemoManagers procs, LeaseWatch watch, Progress progress)
      throws InterruptedException {
    String leader = watch.owners().keySet().stream().findFirst().orElse(null);
    DemoManagers.Manager victim = leader != null ? procs.get(leader) : procs.all().get(0);
    watch.killing(victim.id);
    procs.kill(victim);
    progress.note("kill -9 " + victim.id + " (the leader), while its jobs run");
    return victim;
  }

  private static void restart(DemoManagers procs, DemoManagers.Manager m, Progress progress)
      throws InterruptedException {
    progress.note("starting " + m.id + " again");
    procs.restart(m);
  }

  /** Waits until no job is pending or fired (true), or the timeout (false). */
  private boolean awaitFinished(DemoDatabase.Shard shard, Progress progress)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    long unfinished = -1;
    while (true) {
      try (Connection c = shard.pool().getConnection();
          Statement st = c.createStatement();
          ResultSet rs =
              st.executeQuery("SELECT COUNT(*) FROM " + QUEUE + " WHERE state IN (0, 1)")) {
        rs.next();
        unfinished = rs.getLong(1);
        if (unfinished == 0) {
          return true;
        }
      } catch (SQLException e) {
        // Ask again.
      }
      if (System.nanoTime() > deadline) {
        progress.note(
            String.format(
                "gave up after %d s with %d jobs still pending or fired",
                timeoutSeconds, unfinished));
        return false;
      }
      Thread.sleep(200);
    }
  }

  /** Jobs whose row is not acked, or that no handler finished (by the table's ids). */
  private long lost(DemoDatabase.Shard shard, LongReceivers receivers) throws SQLException {
    Map<Long, Integer> states = new HashMap<>();
    try (Connection c = shard.pool().getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT id, state FROM " + QUEUE)) {
      while (rs.next()) {
        states.put(rs.getLong(1), rs.getInt(2));
      }
    }
    long lost = jobs - states.size();
    for (Map.Entry<Long, Integer> e : states.entrySet()) {
      if (e.getValue() != 2 || !receivers.completed().contains(e.getKey())) {
        lost++;
      }
    }
    if (lost > 0) {
      err.printf(
          "demo: %d jobs lost (%d rows; %d not acked)%n",
          lost, states.size(), states.values().stream().filter(s -> s != 2).count());
    }
    return lost;
  }

  private static String sample(LongReceivers receivers) {
    return receivers.duplicated().stream().sorted().limit(5).toList().toString();
  }
}
