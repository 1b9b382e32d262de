package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.client.EventProducer;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.Fence;
import dev.sluice.db.store.FencedOffException;
import dev.sluice.db.store.FireRef;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.db.store.JdbcLeaseStore;
import dev.sluice.db.store.Release;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A leader's writes are conditioned on its lease token ({@code sluice_fence}): once another manager
 * took the lease, none of them applies, each says why, and renewals never wait for them.
 */
class FenceTest {
  static final long HOUR = Duration.ofHours(1).toNanos();
  static TestDatabase db;
  static HikariDataSource ds;
  static int n;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(FenceTest.class);
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

  /** Transactions of this test's database waiting for a lock. */
  static long lockWaits() throws Exception {
    return queryLong(
        "SELECT COUNT(*) FROM information_schema.innodb_trx t JOIN information_schema.processlist p"
            + " ON p.id = t.trx_mysql_thread_id WHERE t.trx_state = 'LOCK WAIT' AND p.db = DATABASE()");
  }

  static QueueTable newQueue() throws Exception {
    String table = "fence_q" + (++n);
    db.exec(
        QueueConvention.createTableSql(table, List.of("body VARCHAR(100) NULL"), "sluice_queue"));
    return new QueueCatalog(ds).inspect(new QueueCatalog.Candidate(table, "sluice_queue")).queue();
  }

  static long insert(QueueTable q) throws Exception {
    try (Connection c = ds.getConnection()) {
      return EventProducer.insert(c, q.name(), Map.of("body", "x"));
    }
  }

  static EventRef fireOne(JdbcEventStore store, long id) {
    long now = store.serverTimeNs();
    EventRow row =
        store.pollPending(now + HOUR, 100).stream().filter(r -> r.id() == id).findFirst().get();
    var out =
        store.fireAsPolled(
            List.of(new FireRef(id, row.epoch(), row.timeNextNs())), () -> now + HOUR);
    assertThat(out.fired()).containsKey(id);
    return new EventRef(id, row.epoch() + 1);
  }

  @Test
  void afterATakeoverNoWriteOfTheOldLeaderApplies() throws Exception {
    JdbcLeaseStore leases = new JdbcLeaseStore(ds);
    var mine = leases.acquire("s1", "old", HOUR);
    assertThat(mine.held()).isTrue();
    List<FencedOffException> told = new CopyOnWriteArrayList<>();
    QueueTable q = newQueue();
    JdbcEventStore store = new JdbcEventStore(ds, q, new Fence("s1", mine.token(), told::add));
    long pending = insert(q);
    EventRef fired = fireOne(store, insert(q));
    EventRef toRelease = fireOne(store, insert(q));
    EventRef acked = fireOne(store, insert(q));
    assertThat(store.ack(List.of(acked), store.serverTimeNs()))
        .containsEntry(acked, CasOutcome.APPLIED);

    // The lease lapses and another manager takes it (and the fence with it).
    db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1'");
    var theirs = leases.acquire("s1", "new", HOUR);
    assertThat(theirs.held()).isTrue();
    assertThat(theirs.token()).isGreaterThan(mine.token());
    assertThat(queryLong("SELECT token FROM sluice_fence WHERE shard = 's1'"))
        .isEqualTo(theirs.token());

    long now = store.serverTimeNs();
    EventRow row =
        store.pollPending(now + HOUR, 100).stream()
            .filter(r -> r.id() == pending)
            .findFirst()
            .get();
    assertThatThrownBy(
            () ->
                store.fireAsPolled(
                    List.of(new FireRef(pending, row.epoch(), row.timeNextNs())), () -> now + HOUR))
        .isInstanceOf(FencedOffException.class)
        .hasMessageContaining("shard s1")
        .hasMessageContaining("token " + mine.token())
        .hasMessageContaining("token " + theirs.token());
    assertThatThrownBy(() -> store.ack(List.of(fired), now)).isInstanceOf(FencedOffException.class);
    assertThatThrownBy(() -> store.release(List.of(new Release(toRelease, now, false))))
        .isInstanceOf(FencedOffException.class);
    assertThatThrownBy(() -> store.release(List.of(new Release(toRelease, now, true, "x"))))
        .isInstanceOf(FencedOffException.class);
    assertThatThrownBy(() -> store.markDead(Map.of(new EventRef(pending, 0), "x")))
        .isInstanceOf(FencedOffException.class);
    assertThat(store.purge(now + HOUR, 100)).as("purge deletes nothing").isZero();

    String t = q.name();
    assertThat(queryLong("SELECT state * 10 + epoch FROM " + t + " WHERE id = " + pending))
        .as("still pending at epoch 0")
        .isEqualTo(0);
    assertThat(queryLong("SELECT COUNT(*) FROM " + t + " WHERE state = 1")).isEqualTo(2);
    assertThat(queryLong("SELECT COUNT(*) FROM " + t + " WHERE state = 2"))
        .as("the acked row is not purged")
        .isEqualTo(1);
    assertThat(queryLong("SELECT COUNT(*) FROM sluice_dead_reason")).isZero();
    assertThat(told).hasSize(5).allSatisfy(e -> assertThat(e.token()).isEqualTo(mine.token()));

    // Not a leader's write: an ack arriving at a manager that does not dispatch the queue.
    assertThat(new JdbcEventStore(ds, q).ack(List.of(fired), now))
        .containsEntry(fired, CasOutcome.APPLIED);
    // The new leader's store writes.
    JdbcEventStore next = new JdbcEventStore(ds, q, new Fence("s1", theirs.token(), null));
    assertThat(next.ack(List.of(toRelease), now)).containsEntry(toRelease, CasOutcome.APPLIED);
  }

  /**
   * An ordered queue's holds and releases are a leader's writes too: a deposed leader can neither
   * hold an event behind its key nor release a held one.
   */
  @Test
  void aDeposedLeaderCannotHoldOrReleaseAnOrderedQueuesEvents() throws Exception {
    JdbcLeaseStore leases = new JdbcLeaseStore(ds);
    db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's2'");
    var mine = leases.acquire("s2", "old", HOUR);
    String table = "fence_ordered" + (++n);
    db.exec(
        QueueConvention.createTableSql(
            table,
            List.of("k VARCHAR(20) NULL", "KEY `sluice_ordering` (`k`, `state`, `id`)"),
            "sluice_queue ordering=key ordering_column=k"));
    QueueTable q =
        new QueueCatalog(ds)
            .inspect(
                new QueueCatalog.Candidate(table, "sluice_queue ordering=key ordering_column=k"))
            .queue();
    assertThat(q.orderingIndex()).isEqualTo("sluice_ordering");
    JdbcEventStore store = new JdbcEventStore(ds, q, new Fence("s2", mine.token(), null));
    db.exec("INSERT INTO " + table + " (k) VALUES ('a'), ('a'), ('a')");
    long first = queryLong("SELECT MIN(id) FROM " + table);
    EventRef second = new EventRef(first + 1, 0);
    EventRef third = new EventRef(first + 2, 0);
    assertThat(store.hold(List.of(third))).containsEntry(third, CasOutcome.APPLIED);

    db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's2'");
    assertThat(leases.acquire("s2", "new", HOUR).held()).isTrue();
    assertThatThrownBy(() -> store.hold(List.of(second))).isInstanceOf(FencedOffException.class);
    assertThatThrownBy(() -> store.unhold(List.of(third))).isInstanceOf(FencedOffException.class);
    assertThat(
            queryLong(
                "SELECT COUNT(*) FROM " + table + " WHERE time_next >= " + QueueConvention.HELD_NS))
        .as("only the row held before the takeover")
        .isEqualTo(1);
  }

  /**
   * The fence costs the CAS nothing in plan: the table by primary key, the fence row by its key.
   * The uncorrelated EXISTS is evaluated once, before the rows are read (with no fence row of that
   * token, the plan is "Impossible WHERE": no row is even looked at).
   */
  @Test
  void aFencedCompareAndSetKeepsItsPlan() throws Exception {
    QueueTable q = newQueue();
    for (int i = 0; i < 200; i++) {
      insert(q);
    }
    db.exec("ANALYZE TABLE " + q.name());
    long token = new JdbcLeaseStore(ds).acquire("s3", "me", HOUR).token();
    JdbcEventStore store = new JdbcEventStore(ds, q, new Fence("s3", token, null));
    String sql = store.ackSql(List.of(5L, 6L, 7L), 1, 99);
    assertThat(sql).contains("sluice_fence");
    List<Map<String, String>> plan = SchemaTest.explain(ds, sql);
    Map<String, String> events =
        plan.stream()
            .filter(p -> q.name().equals(p.get("table")))
            .findFirst()
            .orElseThrow(() -> new AssertionError(plan.toString()));
    assertThat(events.get("key")).as(plan.toString()).isEqualTo("PRIMARY");
    assertThat(events.get("type")).as(plan.toString()).isEqualTo("range");
    plan.stream()
        .filter(p -> "sluice_fence".equals(p.get("table")))
        .forEach(p -> assertThat(p.get("type")).as(plan.toString()).isIn("const", "eq_ref"));
  }

  /**
   * A fenced write that waits on an application's row lock holds the fence row shared: the lease
   * renewal (another row) goes through meanwhile, and the lease is not lost for it.
   */
  @Test
  void aFencedWriteWaitingOnAnApplicationsRowLockDoesNotDelayTheRenewal() throws Exception {
    JdbcLeaseStore leases = new JdbcLeaseStore(ds);
    var mine = leases.acquire("s2", "me", HOUR);
    QueueTable q = newQueue();
    JdbcEventStore store = new JdbcEventStore(ds, q, new Fence("s2", mine.token(), null));
    EventRef ref = fireOne(store, insert(q));
    try (Connection app = ds.getConnection()) {
      app.setAutoCommit(false);
      try (Statement s = app.createStatement()) {
        s.executeQuery("SELECT * FROM " + q.name() + " WHERE id = " + ref.id() + " FOR UPDATE")
            .close();
      }
      CompletableFuture<Map<EventRef, CasOutcome>> ack =
          CompletableFuture.supplyAsync(() -> store.ack(List.of(ref), store.serverTimeNs()));
      await().atMost(Duration.ofSeconds(10)).until(() -> lockWaits() > 0);
      CompletableFuture<Boolean> renew =
          CompletableFuture.supplyAsync(() -> leases.renew("s2", "me", HOUR));
      await().atMost(Duration.ofSeconds(10)).until(renew::isDone);
      assertThat(renew.join()).isTrue();
      assertThat(ack).as("the ack still waits on the application's lock").isNotDone();
      app.rollback();
      assertThat(ack.get()).containsEntry(ref, CasOutcome.APPLIED);
    }
  }

  /**
   * A takeover waits for the old leader's fenced write in progress (here an ack waiting on an
   * application's row lock): that write applies before the takeover commits, and every later write
   * of the old leader is refused. There is no moment at which both leaders' writes apply.
   */
  @Test
  void aTakeoverWaitsForTheOldLeadersWriteInProgressAndRefusesTheNext() throws Exception {
    JdbcLeaseStore leases = new JdbcLeaseStore(ds);
    var mine = leases.acquire("s4", "old", HOUR);
    QueueTable q = newQueue();
    JdbcEventStore store = new JdbcEventStore(ds, q, new Fence("s4", mine.token(), null));
    EventRef first = fireOne(store, insert(q));
    EventRef second = fireOne(store, insert(q));
    CompletableFuture<Map<EventRef, CasOutcome>> ack;
    CompletableFuture<Boolean> takeover;
    try (Connection app = ds.getConnection()) {
      app.setAutoCommit(false);
      try (Statement s = app.createStatement()) {
        s.executeQuery("SELECT * FROM " + q.name() + " WHERE id = " + first.id() + " FOR UPDATE")
            .close();
      }
      ack = CompletableFuture.supplyAsync(() -> store.ack(List.of(first), store.serverTimeNs()));
      await().atMost(Duration.ofSeconds(10)).until(() -> lockWaits() > 0);
      db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's4'");
      takeover = CompletableFuture.supplyAsync(() -> leases.acquire("s4", "new", HOUR).held());
      await().atMost(Duration.ofSeconds(10)).until(() -> lockWaits() > 1);
      assertThat(takeover).as("the takeover waits for the write in progress").isNotDone();
      app.rollback();
    }
    assertThat(ack.get()).containsEntry(first, CasOutcome.APPLIED);
    assertThat(takeover.get()).isTrue();
    assertThatThrownBy(() -> store.ack(List.of(second), store.serverTimeNs()))
        .isInstanceOf(FencedOffException.class);
    assertThat(queryLong("SELECT state FROM " + q.name() + " WHERE id = " + second.id()))
        .isEqualTo(1);
  }
}
