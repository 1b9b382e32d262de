package dev.sluice.db;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.client.InsertOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Insert-time deduplication on the real database: a second insert of a {@code dedup_key} that a row
 * holds inserts nothing and returns that row's id, in the caller's transaction, from any number of
 * concurrent transactions, until the row is purged; a rolled-back insert frees the key.
 */
class DedupInsertTest {
  static TestDatabase db;
  static HikariDataSource ds;
  static int n;
  JdbcEventStore store;
  String table;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(DedupInsertTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 12);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  @BeforeEach
  void newQueue() throws Exception {
    table = "dedup_q" + (++n);
    db.exec(
        QueueConvention.createTableSql(
            table, List.of("body VARCHAR(100) NULL"), "sluice_queue", true));
    QueueTable q =
        new QueueCatalog(ds).inspect(new QueueCatalog.Candidate(table, "sluice_queue")).queue();
    store = new JdbcEventStore(ds, q);
  }

  /** Transactions of this test's database waiting for a lock. */
  static long lockWaits() throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT COUNT(*) FROM information_schema.innodb_trx t JOIN"
                    + " information_schema.processlist p ON p.id = t.trx_mysql_thread_id"
                    + " WHERE t.trx_state = 'LOCK WAIT' AND p.db = DATABASE()")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  InsertOutcome insertUnique(String key, String body) throws Exception {
    try (Connection c = ds.getConnection()) {
      return EventProducer.insertUnique(c, table, key, Map.of("body", body));
    }
  }

  long rows() throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT COUNT(*) FROM `" + table + "`")) {
      r.next();
      return r.getLong(1);
    }
  }

  String body(long id) throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT body FROM `" + table + "` WHERE id = " + id)) {
      return r.next() ? r.getString(1) : null;
    }
  }

  /** Fires and acks the event as a manager would (its time_next becomes the settle time). */
  void fireAndAck(long id, long settledNs) {
    store.fire(List.of(new EventRef(id, 0)), settledNs + 1_000_000_000L);
    store.ack(List.of(new EventRef(id, 1)), settledNs);
  }

  @Test
  void aDuplicateReturnsTheFirstIdAndInsertsNothing() throws Exception {
    InsertOutcome first = insertUnique("order-1001-created", "first");
    InsertOutcome second = insertUnique("order-1001-created", "second");
    InsertOutcome other = insertUnique("order-1002-created", "other");

    assertThat(first.duplicate()).isFalse();
    assertThat(second.duplicate()).isTrue();
    assertThat(second.id()).isEqualTo(first.id());
    assertThat(other.duplicate()).isFalse();
    assertThat(other.id()).isNotEqualTo(first.id());
    assertThat(rows()).isEqualTo(2);
    assertThat(body(first.id())).isEqualTo("first");
  }

  @Test
  void keysCompareExactlyAndRowsWithoutAKeyNeverCollide() throws Exception {
    assertThat(insertUnique("Key-A", "a").duplicate()).isFalse();
    assertThat(insertUnique("key-a", "b").duplicate()).isFalse();
    try (Connection c = ds.getConnection()) {
      EventProducer.insert(c, table, Map.of("body", "plain"));
      EventProducer.insert(c, table, Map.of("body", "plain"));
    }
    assertThat(rows()).isEqualTo(4);
  }

  @Test
  void aDuplicateInTheSameTransactionKeepsTheTransactionUsable() throws Exception {
    long other;
    InsertOutcome first;
    InsertOutcome again;
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      first = EventProducer.insertUnique(c, table, "k", Map.of("body", "one"));
      again = EventProducer.insertUnique(c, table, "k", Map.of("body", "two"));
      other = EventProducer.insert(c, table, Map.of("body", "after the duplicate"));
      c.commit();
    }
    assertThat(first.duplicate()).isFalse();
    assertThat(again).isEqualTo(new InsertOutcome(first.id(), true));
    assertThat(rows()).isEqualTo(2);
    assertThat(body(other)).isEqualTo("after the duplicate");
  }

  @Test
  void aTransactionWhoseSnapshotPredatesTheFirstInsertStillFindsIt() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement();
          ResultSet r = s.executeQuery("SELECT COUNT(*) FROM `" + table + "`")) {
        r.next(); // REPEATABLE READ: this read fixes the transaction's snapshot
      }
      InsertOutcome other = insertUnique("k", "committed by another transaction");
      InsertOutcome mine = EventProducer.insertUnique(c, table, "k", Map.of("body", "mine"));
      c.commit();
      assertThat(mine).isEqualTo(new InsertOutcome(other.id(), true));
    }
    assertThat(rows()).isEqualTo(1);
  }

  @Test
  void aTransactionThatFoundADuplicateDoesNotHoldTheRowAgainstTheManager() throws Exception {
    InsertOutcome first = insertUnique("k", "one");
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThat(EventProducer.insertUnique(c, table, "k", Map.of("body", "two")).duplicate())
          .isTrue();
      // The transaction stays open; the manager fires and acks the row meanwhile, unhindered.
      try (Connection m = ds.getConnection();
          Statement s = m.createStatement()) {
        s.execute("SET SESSION innodb_lock_wait_timeout = 2");
        assertThat(
                s.executeUpdate(
                    "UPDATE `" + table + "` SET state = 1, epoch = 1 WHERE id = " + first.id()))
            .isEqualTo(1);
        assertThat(
                s.executeUpdate(
                    "UPDATE `"
                        + table
                        + "` SET state = 2 WHERE id = "
                        + first.id()
                        + " AND epoch = 1"))
            .isEqualTo(1);
      }
      c.commit();
    }
  }

  @Test
  void anAckedEventHoldsItsKeyUntilPurged() throws Exception {
    InsertOutcome first = insertUnique("k", "one");
    long t = store.serverTimeNs();
    fireAndAck(first.id(), t - 10_000);

    assertThat(insertUnique("k", "two")).isEqualTo(new InsertOutcome(first.id(), true));

    assertThat(store.purge(t, 1000)).isEqualTo(1);
    InsertOutcome afterPurge = insertUnique("k", "three");
    assertThat(afterPurge.duplicate()).isFalse();
    assertThat(afterPurge.id()).isNotEqualTo(first.id());
    assertThat(body(afterPurge.id())).isEqualTo("three");
  }

  @Test
  void aDeadEventHoldsItsKey() throws Exception {
    InsertOutcome first = insertUnique("k", "one");
    db.exec("UPDATE `" + table + "` SET state = 3 WHERE id = " + first.id());
    store.purge(store.serverTimeNs() + 1_000_000_000L, 1000);
    assertThat(insertUnique("k", "two")).isEqualTo(new InsertOutcome(first.id(), true));
  }

  @Test
  void aRolledBackInsertFreesTheKey() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThat(EventProducer.insertUnique(c, table, "k", Map.of("body", "x")).duplicate())
          .isFalse();
      c.rollback();
    }
    InsertOutcome next = insertUnique("k", "y");
    assertThat(next.duplicate()).isFalse();
    assertThat(rows()).isEqualTo(1);
  }

  @Test
  void anInsertWaitingBehindAnUncommittedKeyGoesInWhenThatRollsBack() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection first = ds.getConnection()) {
      first.setAutoCommit(false);
      EventProducer.insertUnique(first, table, "k", Map.of("body", "rolled back"));
      CountDownLatch started = new CountDownLatch(1);
      Future<InsertOutcome> waiting =
          pool.submit(
              () -> {
                try (Connection c = ds.getConnection()) {
                  c.setAutoCommit(false);
                  started.countDown();
                  InsertOutcome o = EventProducer.insertUnique(c, table, "k", Map.of("body", "b"));
                  c.commit();
                  return o;
                }
              });
      started.await();
      // It blocks on the key: its transaction waits for the first one's lock.
      await().atMost(10, SECONDS).until(() -> lockWaits() >= 1);
      first.rollback();
      InsertOutcome o = waiting.get(30, TimeUnit.SECONDS);
      assertThat(o.duplicate()).isFalse();
      assertThat(body(o.id())).isEqualTo("b");
    } finally {
      pool.shutdownNow();
    }
    assertThat(rows()).isEqualTo(1);
  }

  @Test
  void eightConcurrentInsertsOfOneKeyMakeOneRowAndAgreeOnItsId() throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<InsertOutcome>> results = new ArrayList<>();
    try {
      for (int i = 0; i < threads; i++) {
        String body = "t" + i;
        results.add(
            pool.submit(
                () -> {
                  try (Connection c = ds.getConnection()) {
                    c.setAutoCommit(false);
                    go.await();
                    InsertOutcome o =
                        EventProducer.insertUnique(c, table, "same", Map.of("body", body));
                    // Holds the key a moment, so that others wait on it (a load shape, not a wait).
                    Thread.sleep(20);
                    c.commit();
                    return o;
                  }
                }));
      }
      go.countDown();
      List<InsertOutcome> outcomes = new ArrayList<>();
      for (Future<InsertOutcome> f : results) {
        outcomes.add(f.get(60, TimeUnit.SECONDS));
      }
      assertThat(outcomes.stream().map(InsertOutcome::id).distinct()).hasSize(1);
      assertThat(outcomes.stream().filter(o -> !o.duplicate())).hasSize(1);
      assertThat(rows()).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void otherErrorsAreNotSwallowed() throws Exception {
    InsertOutcome first = insertUnique("k", "one");
    try (Connection c = ds.getConnection()) {
      // A duplicate primary key with a fresh dedup key is the caller's error, not a duplicate.
      assertThatThrownBy(
              () ->
                  EventProducer.insertUnique(
                      c,
                      table,
                      "fresh",
                      Map.of("body", "x"),
                      EventOptions.builder().id(first.id()).build()))
          .isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1062));
      assertThatThrownBy(
              () -> EventProducer.insertUnique(c, table, "k2", Map.of("no_such_column", 1)))
          .isInstanceOf(SQLException.class);
      assertThatThrownBy(
              () -> EventProducer.insertUnique(c, table, "x".repeat(256), Map.of("body", "x")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("255");
      assertThatThrownBy(() -> EventProducer.insertUnique(c, table, null, Map.of("body", "x")))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(
              () ->
                  EventProducer.insertUnique(
                      c, table, "k", Map.of("body", "x", QueueConvention.DEDUP_KEY, "other")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("dedup_key");
    }
    assertThat(rows()).isEqualTo(1);
  }

  @Test
  void aQueueWithoutTheColumnIsNamedInTheError() throws Exception {
    String plain = table + "_plain";
    db.exec(
        QueueConvention.createTableSql(plain, List.of("body VARCHAR(100) NULL"), "sluice_queue"));
    try (Connection c = ds.getConnection()) {
      assertThatThrownBy(() -> EventProducer.insertUnique(c, plain, "k", Map.of("body", "x")))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining(plain)
          .hasMessageContaining("dedup_key");
    }
  }
}
