package dev.sluice.db.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.DataSources;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.store.Fence;
import dev.sluice.db.store.FencedOffException;
import dev.sluice.db.store.JdbcLeaseStore;
import dev.sluice.db.store.JdbcScheduleStore;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The leader's write of a schedule's occurrences: the events and the schedule's advance in one
 * transaction, a compare-and-set on {@code next_ns}, conditioned on the lease fence.
 */
class ScheduleStoreTest {
  static final long HOUR = Duration.ofHours(1).toNanos();
  static final long S = 1_000_000_000L;
  static TestDatabase db;
  static HikariDataSource ds;
  static int n;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(ScheduleStoreTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 6);
    SluiceMigrations.migrateSluice(ds);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  static long queryLong(String sql) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? rs.getLong(1) : -1;
    }
  }

  static String newQueue() throws Exception {
    String table = "sched_q" + (++n);
    db.exec(
        QueueConvention.createTableSql(
            table, List.of("body VARCHAR(100) NULL", "n INT NULL"), "sluice_queue"));
    return table;
  }

  /** A started schedule (next_ns set) every second on {@code queue}. */
  static Schedule started(JdbcScheduleStore store, String name, String queue, long next) {
    store.create(
        Schedule.create(
            name, queue, null, Duration.ofSeconds(1), null, Map.of("body", "tick", "n", 7), null));
    assertThat(store.start(store.get(name), next)).isTrue();
    return store.get(name);
  }

  @Test
  void occurrencesAreInsertedWithTheAdvanceAndOnlyOnceFromTheSameNext() throws Exception {
    var lease = new JdbcLeaseStore(ds).acquire("s1", "me", HOUR);
    JdbcScheduleStore store = new JdbcScheduleStore(ds, new Fence("s1", lease.token(), null));
    String q = newQueue();
    long t0 = store.nowNs() + 10 * S;
    Schedule s = started(store, "once", q, t0);
    Recurrence r = s.recurrence();
    Occurrences plan = Occurrences.plan(r, s.catchUp(), s.nextNs(), t0, 1500_000_000L, HOUR);
    assertThat(plan.times()).containsExactly(t0, t0 + S);

    List<Long> ids = store.insert(s, s.columns(), plan);
    assertThat(ids).hasSize(2);
    // A second leader that read the same next_ns: its CAS finds it moved; nothing is written.
    assertThat(store.insert(s, s.columns(), plan)).isNull();

    assertThat(queryLong("SELECT COUNT(*) FROM " + q)).isEqualTo(2);
    assertThat(queryLong("SELECT MIN(time_next) FROM " + q)).isEqualTo(t0);
    assertThat(queryLong("SELECT MAX(time_next) FROM " + q)).isEqualTo(t0 + S);
    assertThat(
            queryLong("SELECT COUNT(*) FROM " + q + " WHERE body = 'tick' AND n = 7 AND state = 0"))
        .isEqualTo(2);
    Schedule after = store.get("once");
    assertThat(after.nextNs()).isEqualTo(t0 + 2 * S);
    assertThat(after.lastNs()).isEqualTo(t0 + S);
    assertThat(after.lastId()).isEqualTo(ids.get(1));
  }

  @Test
  void aDeposedLeadersInsertIsRefusedByTheFence() throws Exception {
    JdbcLeaseStore leases = new JdbcLeaseStore(ds);
    db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's2'");
    var mine = leases.acquire("s2", "old", HOUR);
    List<FencedOffException> told = new CopyOnWriteArrayList<>();
    JdbcScheduleStore old = new JdbcScheduleStore(ds, new Fence("s2", mine.token(), told::add));
    String q = newQueue();
    long t0 = old.nowNs();
    Schedule s = started(old, "deposed", q, t0);

    // Another manager takes the lease (and the fence with it).
    db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's2'");
    var theirs = leases.acquire("s2", "new", HOUR);
    assertThat(theirs.held()).isTrue();

    Occurrences plan = Occurrences.plan(s.recurrence(), s.catchUp(), s.nextNs(), t0, 0, HOUR);
    assertThatThrownBy(() -> old.insert(s, s.columns(), plan))
        .isInstanceOf(FencedOffException.class)
        .hasMessageContaining("shard s2")
        .hasMessageContaining("schedule deposed")
        .hasMessageContaining("token " + theirs.token());
    assertThat(told).hasSize(1);
    assertThat(queryLong("SELECT COUNT(*) FROM " + q)).as("no occurrence inserted").isZero();
    assertThat(old.get("deposed").nextNs()).as("not advanced").isEqualTo(t0);
    // Nor can it start a schedule.
    old.create(Schedule.create("fresh", q, "0 3 * * *", null, "UTC", Map.of(), CatchUp.NONE));
    assertThatThrownBy(() -> old.start(old.get("fresh"), t0))
        .isInstanceOf(FencedOffException.class);

    // The new leader inserts the same occurrence, once.
    JdbcScheduleStore next = new JdbcScheduleStore(ds, new Fence("s2", theirs.token(), null));
    assertThat(next.insert(s, s.columns(), plan)).hasSize(1);
    assertThat(queryLong("SELECT COUNT(*) FROM " + q + " WHERE time_next = " + t0)).isEqualTo(1);
  }

  @Test
  void operatorsCreatePauseResumeAndDelete() throws Exception {
    JdbcScheduleStore store = new JdbcScheduleStore(ds);
    String q = newQueue();
    store.create(
        Schedule.create(
            "nightly", q, "30 2 * * *", null, "Europe/Berlin", Map.of("body", "x"), CatchUp.ALL));
    assertThatThrownBy(
            () ->
                store.create(
                    Schedule.create("nightly", q, "* * * * *", null, null, Map.of(), null)))
        .hasMessageContaining("schedule nightly exists already");
    Schedule s = store.get("nightly");
    assertThat(s.zone()).isEqualTo("Europe/Berlin");
    assertThat(s.catchUp()).isEqualTo(CatchUp.ALL);
    assertThat(s.columns()).containsEntry("body", "x");
    assertThat(s.nextNs()).isZero();

    assertThat(store.start(s, 5)).isTrue();
    assertThat(store.pause("nightly")).isTrue();
    Schedule paused = store.get("nightly");
    assertThat(paused.paused()).isTrue();
    // A paused schedule is not advanced by the leader.
    assertThat(
            store.insert(
                paused,
                paused.columns(),
                Occurrences.plan(paused.recurrence(), CatchUp.ALL, 5, 5, 0, HOUR)))
        .isNull();
    assertThat(store.resume("nightly")).isTrue();
    assertThat(store.get("nightly").paused()).isFalse();
    assertThat(store.get("nightly").nextNs()).as("resumed from now").isZero();
    assertThat(store.delete("nightly")).isTrue();
    assertThat(store.get("nightly")).isNull();
    assertThat(store.delete("nightly")).isFalse();
    assertThat(store.pause("nightly")).isFalse();
  }

  @Test
  void aMigrationMayInsertASchedule() throws Exception {
    String q = newQueue();
    db.exec(
        "INSERT INTO sluice_schedule (name, queue, cron, zone, event_columns, catch_up)"
            + " VALUES ('from-sql', '"
            + q
            + "', '0 * * * *', 'Europe/Berlin', '{\"body\": \"hourly\"}', 'none')");
    Schedule s = new JdbcScheduleStore(ds).get("from-sql");
    assertThat(s.recurrence().isCron()).isTrue();
    assertThat(s.catchUp()).isEqualTo(CatchUp.NONE);
    assertThat(s.columns()).containsEntry("body", "hourly");
    assertThat(s.paused()).isFalse();
    assertThat(s.nextNs()).isZero();
  }
}
