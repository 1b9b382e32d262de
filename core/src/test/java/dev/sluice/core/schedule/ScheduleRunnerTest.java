package dev.sluice.core.schedule;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.core.loop.ShardGate;
import dev.sluice.core.loop.Ticker;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.schedule.CatchUp;
import dev.sluice.db.schedule.Occurrences;
import dev.sluice.db.schedule.Schedule;
import dev.sluice.db.store.Fence;
import dev.sluice.db.store.JdbcLeaseStore;
import dev.sluice.db.store.JdbcScheduleStore;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Recurring events inserted by the shard's leader: each occurrence exactly once while it runs and
 * across a failover between two managers, and missed occurrences after a downtime as the schedule's
 * catch-up policy says.
 */
class ScheduleRunnerTest {
  static final long S = 1_000_000_000L;
  static final long MS = 1_000_000L;
  static final long HOUR = 3600 * S;
  static TestDatabase db;
  static HikariDataSource ds;
  static int n;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(ScheduleRunnerTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 6);
    SluiceMigrations.migrateSluice(ds);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  /** Each test's schedules go with it, so that a later test's runner does not run them. */
  @AfterEach
  void deleteSchedules() throws Exception {
    db.exec("DELETE FROM sluice_schedule");
  }

  static List<Long> longs(String sql) throws Exception {
    List<Long> out = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(rs.getLong(1));
      }
    }
    return out;
  }

  static String newQueue() throws Exception {
    String table = "rec_q" + (++n);
    db.exec(
        QueueConvention.createTableSql(table, List.of("body VARCHAR(100) NULL"), "sluice_queue"));
    return table;
  }

  /** The occurrence times inserted into {@code queue}, ascending, duplicates kept. */
  static List<Long> times(String queue) throws Exception {
    return longs("SELECT time_next FROM " + queue + " ORDER BY time_next, id");
  }

  /** Every time is one step after the one before: no occurrence doubled, none missing. */
  static void assertGrid(List<Long> times, long stepNs) {
    assertThat(times).doesNotHaveDuplicates();
    for (int i = 1; i < times.size(); i++) {
      assertThat(times.get(i) - times.get(i - 1))
          .as("gap after occurrence %d of %d", i, times.size())
          .isEqualTo(stepNs);
    }
  }

  /** A manager on the test's database, renewing its lease every 200 ms. */
  static EngineHarness.Builder manager(String managerId) {
    return EngineHarness.on(db)
        .managerId(managerId)
        .poolSize(8)
        .discoveryInterval(Duration.ofMillis(300))
        .leaseRenew(Duration.ofMillis(200));
  }

  /** A runner of a lease of its own on shard {@code shard} (the tests below call its passes). */
  static ScheduleRunner runner(String shard) {
    return runner(shard, q -> true, new SimpleMeterRegistry());
  }

  /** A runner of a lease of its own, passing every 50 ms when started, counting in {@code reg}. */
  static ScheduleRunner runner(
      String shard, java.util.function.Predicate<String> knownQueue, MeterRegistry reg) {
    exec0("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = '" + shard + "'");
    var lease = new JdbcLeaseStore(ds).acquire(shard, "test", HOUR);
    return new ScheduleRunner(
        shard,
        new JdbcScheduleStore(ds, new Fence(shard, lease.token(), null)),
        knownQueue,
        new ShardGate(),
        reg,
        LoopFaults.ofShard(reg, shard, Ticker.SYSTEM),
        Ticker.SYSTEM,
        Duration.ofMillis(50));
  }

  /** {@code sluice_loop_errors_total} of a shard's recurring events, or 0 before the first. */
  static double loopErrors(MeterRegistry reg, String shard) {
    Counter c =
        reg.find("sluice.loop.errors")
            .tags("shard", shard, "queue", "", "loop", FaultHook.SCHEDULES)
            .counter();
    return c == null ? 0 : c.count();
  }

  static void exec0(String sql) {
    try {
      db.exec(sql);
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  // ---------------------------------------------------------------- a leader running

  @Test
  void anIntervalScheduleInsertsEachOccurrenceOnceWhileTheLeaderRuns() throws Exception {
    String q = newQueue();
    new JdbcScheduleStore(ds)
        .create(
            Schedule.create(
                "tick", q, null, Duration.ofMillis(200), null, Map.of("body", "tick"), null));
    try (EngineHarness leader = manager("runner-a").start()) {
      await().atMost(30, SECONDS).until(() -> times(q).size() >= 20);
    }
    List<Long> times = times(q);
    assertGrid(times, 200 * MS);
    assertThat(longs("SELECT COUNT(*) FROM " + q + " WHERE body = 'tick' AND state = 0"))
        .containsExactly((long) times.size());
    Schedule s = new JdbcScheduleStore(ds).get("tick");
    assertThat(s.nextNs()).isEqualTo(times.get(times.size() - 1) + 200 * MS);
    assertThat(s.lastId()).isEqualTo(longs("SELECT MAX(id) FROM " + q).get(0));
    db.exec("DELETE FROM sluice_schedule WHERE name = 'tick'");
  }

  /**
   * Two managers on the same shard: the first leads, then loses its lease to a manager that holds
   * it for a while (so for that time nobody inserts), then the second takes over. Whoever inserted
   * each occurrence, the series has no doubled and no missing occurrence.
   */
  @Test
  void aFailoverNeitherDoublesNorMissesAnOccurrence() throws Exception {
    String q = newQueue();
    new JdbcScheduleStore(ds)
        .create(
            Schedule.create(
                "failover",
                q,
                null,
                Duration.ofMillis(300),
                null,
                Map.of("body", "f"),
                CatchUp.NONE));
    EngineHarness ha = manager("runner-a").start();
    EngineHarness hb = null;
    try {
      QueueEngine a = ha.engine();
      await().atMost(20, SECONDS).until(() -> a.shards().get(0).leading());
      hb = manager("runner-b").start();
      QueueEngine b = hb.engine();
      await().atMost(30, SECONDS).until(() -> times(q).size() >= 6);
      assertThat(b.shards().get(0).leading()).isFalse();

      // A takeover by another manager (the lease and its fence move on): the first stops.
      db.exec(
          "UPDATE sluice_lease l JOIN sluice_fence f ON f.shard = l.shard"
              + " SET l.owner = 'thief', l.token = l.token + 1, f.owner = 'thief',"
              + " f.token = l.token, l.expires_ns = l.expires_ns + 3600000000000"
              + " WHERE l.shard = 's1'");
      await().atMost(10, SECONDS).until(() -> !a.shards().get(0).leading());
      int before = times(q).size();
      // What was inserted ahead of time stays; nothing after the takeover (five occurrences' time).
      await()
          .during(1500, MILLISECONDS)
          .atMost(3, SECONDS)
          .until(() -> times(q).size() <= before + 1);

      // The thief goes away; one of the two managers takes the shard and catches up.
      db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1' AND owner = 'thief'");
      await()
          .atMost(20, SECONDS)
          .until(() -> a.shards().get(0).leading() || b.shards().get(0).leading());
      int after = times(q).size();
      await().atMost(30, SECONDS).until(() -> times(q).size() >= after + 6);
      // Then a graceful hand-over, to whichever did not lead.
      QueueEngine leader = a.shards().get(0).leading() ? a : b;
      QueueEngine other = leader == a ? b : a;
      leader.stop();
      await().atMost(20, SECONDS).until(() -> other.shards().get(0).leading());
      int handedOver = times(q).size();
      await().atMost(30, SECONDS).until(() -> times(q).size() >= handedOver + 6);
    } finally {
      ha.close();
      if (hb != null) {
        hb.close();
      }
    }
    List<Long> times = times(q);
    assertThat(times.size()).isGreaterThanOrEqualTo(18);
    assertGrid(times, 300 * MS);
    db.exec("DELETE FROM sluice_schedule WHERE name = 'failover'");
  }

  // ---------------------------------------------------------------- after a downtime

  /** A schedule every minute whose next occurrence fell an hour ago (nobody led since). */
  static Schedule missedAnHour(String name, String queue, CatchUp catchUp) throws Exception {
    JdbcScheduleStore store = new JdbcScheduleStore(ds);
    store.create(
        Schedule.create(
            name, queue, null, Duration.ofMinutes(1), null, Map.of("body", name), catchUp));
    db.exec(
        "UPDATE sluice_schedule SET next_ns = "
            + (store.nowNs() - HOUR)
            + " WHERE name = '"
            + name
            + "'");
    return store.get(name);
  }

  static long missedBefore(JdbcScheduleStore store) {
    return store.nowNs() - ScheduleRunner.GRACE.toNanos();
  }

  @Test
  void catchUpAllInsertsEachMissedOccurrence() throws Exception {
    String q = newQueue();
    Schedule s = missedAnHour("all", q, CatchUp.ALL);
    runner("c1").pass();
    List<Long> times = times(q);
    assertThat(times.get(0)).isEqualTo(s.nextNs());
    assertGrid(times, 60 * S);
    // Every minute from an hour ago up to now (at most the look-ahead ahead).
    JdbcScheduleStore store = new JdbcScheduleStore(ds);
    assertThat(times.get(times.size() - 1)).isGreaterThan(missedBefore(store));
    assertThat(times).hasSizeBetween(60, 62);
    assertThat(store.get("all").nextNs()).isGreaterThan(store.nowNs());
  }

  @Test
  void catchUpAllIsCapped() throws Exception {
    String q = newQueue();
    JdbcScheduleStore store = new JdbcScheduleStore(ds);
    store.create(
        Schedule.create("capped", q, null, Duration.ofSeconds(1), null, Map.of(), CatchUp.ALL));
    long next = store.nowNs() - HOUR;
    db.exec("UPDATE sluice_schedule SET next_ns = " + next + " WHERE name = 'capped'");
    ScheduleRunner r = runner("c2");
    r.pass();
    long cut = missedBefore(store);
    List<Long> times = times(q);
    assertThat(times).hasSize(Occurrences.MAX_CATCH_UP);
    assertGrid(times, S);
    assertThat(times.get(0)).isEqualTo(next);
    // The next pass resumes on time (the skipped ones stay skipped).
    r.pass();
    List<Long> later = times(q).subList(Occurrences.MAX_CATCH_UP, times(q).size());
    assertThat(later).isNotEmpty().allSatisfy(t -> assertThat(t).isGreaterThanOrEqualTo(cut - S));
    assertGrid(later, S);
  }

  @Test
  void catchUpOneInsertsOneOccurrenceForTheMissedOnes() throws Exception {
    String q = newQueue();
    missedAnHour("one", q, CatchUp.ONE);
    JdbcScheduleStore store = new JdbcScheduleStore(ds);
    long cut = missedBefore(store);
    runner("c3").pass();
    List<Long> times = times(q);
    assertThat(times.stream().filter(t -> t < cut)).as("one for the missed ones").hasSize(1);
    assertThat(times).hasSizeBetween(2, 4);
    assertGrid(times, 60 * S);
    assertThat(store.get("one").nextNs()).isGreaterThan(store.nowNs());
  }

  @Test
  void catchUpNoneSkipsTheMissedOccurrences() throws Exception {
    String q = newQueue();
    missedAnHour("none", q, CatchUp.NONE);
    JdbcScheduleStore store = new JdbcScheduleStore(ds);
    long cut = missedBefore(store);
    runner("c4").pass();
    List<Long> times = times(q);
    assertThat(times).allSatisfy(t -> assertThat(t).isGreaterThanOrEqualTo(cut - S));
    assertThat(times).hasSizeBetween(1, 3);
    assertThat(store.get("none").nextNs()).isGreaterThan(store.nowNs());
  }

  @Test
  void aPausedScheduleInsertsNothingAndResumesFromNow() throws Exception {
    String q = newQueue();
    JdbcScheduleStore store = new JdbcScheduleStore(ds);
    store.create(
        Schedule.create("paused", q, null, Duration.ofMinutes(1), null, Map.of(), CatchUp.ALL));
    store.pause("paused");
    ScheduleRunner r = runner("c5");
    r.pass();
    assertThat(times(q)).isEmpty();
    store.resume("paused");
    long now = store.nowNs();
    r.pass();
    assertThat(times(q)).hasSize(1).allSatisfy(t -> assertThat(t).isGreaterThanOrEqualTo(now));
  }

  @Test
  void aCronScheduleStartsAtItsNextTimeInItsZone() throws Exception {
    String q = newQueue();
    JdbcScheduleStore store = new JdbcScheduleStore(ds);
    store.create(
        Schedule.create("cron", q, "* * * * * *", null, "Europe/Berlin", Map.of(), CatchUp.NONE));
    ScheduleRunner r = runner("c6");
    r.pass();
    List<Long> times = times(q);
    assertThat(times).isNotEmpty();
    assertGrid(times, S);
    assertThat(times).allSatisfy(t -> assertThat(t % S).isZero());
  }

  /** A row with a bad cron expression or an unknown queue is skipped; the others run. */
  @Test
  void aBadScheduleDoesNotStopTheOthers() throws Exception {
    String q = newQueue();
    db.exec(
        "INSERT INTO sluice_schedule (name, queue, cron) VALUES ('bad-cron', '"
            + q
            + "', '61 * * * *'), ('no-queue', 'no_such_queue', '* * * * * *')");
    db.exec(
        "INSERT INTO sluice_schedule (name, queue, every_ms, event_columns) VALUES ('good', '"
            + q
            + "', 1000, '{\"body\": \"good\"}')");
    ScheduleRunner r = runner("c7");
    r.pass();
    r.pass();
    assertThat(longs("SELECT COUNT(*) FROM " + q + " WHERE body = 'good'").get(0)).isPositive();
    assertThat(longs("SELECT COUNT(*) FROM " + q + " WHERE body IS NULL")).containsExactly(0L);
    assertThat(new JdbcScheduleStore(ds).get("bad-cron").nextNs()).isZero();
    db.exec("DELETE FROM sluice_schedule WHERE name IN ('bad-cron', 'no-queue', 'good')");
  }

  /**
   * A pass that fails (the schedules cannot be read) is counted among the shard's loop errors and
   * retried after the backoff: once the table is back, the runner inserts again, on its own.
   */
  @Test
  void aFailingPassIsCountedAndTheRunnerGoesOn() throws Exception {
    String q = newQueue();
    new JdbcScheduleStore(ds)
        .create(Schedule.create("survives", q, null, Duration.ofMillis(100), null, Map.of(), null));
    SimpleMeterRegistry reg = new SimpleMeterRegistry();
    ScheduleRunner r = runner("c8", queue -> true, reg);
    db.exec("RENAME TABLE sluice_schedule TO sluice_schedule_away");
    try {
      r.start();
      await().atMost(10, SECONDS).until(() -> loopErrors(reg, "c8") >= 2);
      assertThat(times(q)).isEmpty();
    } finally {
      db.exec("RENAME TABLE sluice_schedule_away TO sluice_schedule");
    }
    try {
      await().atMost(20, SECONDS).until(() -> times(q).size() >= 3);
      assertThat(r.running()).isTrue();
      assertThat(r.fault()).isNull();
      assertGrid(times(q), 100 * MS);
    } finally {
      r.stop();
      assertThat(r.join(5_000)).as("the runner's thread ends at a stop").isTrue();
    }
  }

  /**
   * An Error in a pass (as a failed read that ran out of memory) is counted and survived like any
   * failure: the runner goes on, and the schedule is served once the error is gone.
   */
  @Test
  void anErrorInAPassIsCountedAndTheRunnerGoesOn() throws Exception {
    String q = newQueue();
    new JdbcScheduleStore(ds)
        .create(Schedule.create("errs", q, null, Duration.ofMillis(100), null, Map.of(), null));
    SimpleMeterRegistry reg = new SimpleMeterRegistry();
    java.util.concurrent.atomic.AtomicInteger errors =
        new java.util.concurrent.atomic.AtomicInteger(3);
    ScheduleRunner r =
        runner(
            "c9",
            queue -> {
              if (errors.getAndDecrement() > 0) {
                throw new OutOfMemoryError("simulated");
              }
              return true;
            },
            reg);
    try {
      r.start();
      await().atMost(20, SECONDS).until(() -> times(q).size() >= 3);
      assertThat(loopErrors(reg, "c9")).isEqualTo(3);
      assertThat(r.fault()).isNull();
      assertThat(r.running()).isTrue();
    } finally {
      r.stop();
      r.join(5_000);
    }
  }

  /**
   * A runner whose thread dies (a fault its loop could not survive) reports a fault of the shard
   * (the lease keeper gives the lease up on it), not a silent stop of every schedule.
   */
  @Test
  void aRunnerWhoseThreadDiesReportsAFault() throws Exception {
    String q = newQueue();
    new JdbcScheduleStore(ds)
        .create(Schedule.create("dies", q, null, Duration.ofSeconds(1), null, Map.of(), null));
    SimpleMeterRegistry reg = new SimpleMeterRegistry();
    ScheduleRunner r = runner("c10", queue -> true, reg);
    assertThat(r.fault()).isNull();
    FaultHook.armFatal(FaultHook.SCHEDULES, "");
    try {
      r.start();
      await().atMost(10, SECONDS).until(() -> r.fault() != null);
    } finally {
      FaultHook.reset();
    }
    assertThat(r.fault()).contains("shard c10").contains("injected fatal fault");
    assertThat(r.running()).isFalse();
    assertThat(loopErrors(reg, "c10"))
        .as("counted, by the loop and by its thread's end")
        .isEqualTo(2);
    assertThat(times(q)).isEmpty();
  }
}
