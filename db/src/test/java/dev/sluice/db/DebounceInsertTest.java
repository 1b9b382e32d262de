package dev.sluice.db;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.client.DebounceOutcome;
import dev.sluice.client.DebounceOutcome.Result;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.FireRef;
import dev.sluice.db.store.FireResult;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link EventProducer#insertDebounced} on the real database, without a manager: a pending event is
 * replaced in place (same id, same epoch, the new columns and due time); a fired event is not
 * touched; a fire that polled the old due time leaves the replaced row alone; bad input writes
 * nothing; concurrent debounces neither deadlock nor make a second row.
 */
class DebounceInsertTest {
  static final long HOUR_NS = 3_600_000_000_000L;
  static TestDatabase db;
  static HikariDataSource ds;
  static int n;
  JdbcEventStore store;
  String table;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(DebounceInsertTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 12);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  @BeforeEach
  void newQueue() throws Exception {
    table = "debounce_q" + (++n);
    db.exec(
        QueueConvention.createTableSql(
            table,
            List.of("body VARCHAR(100) NULL", "note VARCHAR(100) NULL"),
            "sluice_queue",
            true));
    QueueTable q =
        new QueueCatalog(ds).inspect(new QueueCatalog.Candidate(table, "sluice_queue")).queue();
    store = new JdbcEventStore(ds, q);
  }

  DebounceOutcome debounce(String key, Map<String, ?> columns, EventOptions o) throws Exception {
    try (Connection c = ds.getConnection()) {
      return EventProducer.insertDebounced(c, table, key, columns, o);
    }
  }

  static EventOptions in(Duration d) {
    return EventOptions.builder().delay(d).build();
  }

  /** id, epoch, state, time_next, body, note of every row, by id. */
  List<List<Object>> rows() throws Exception {
    List<List<Object>> out = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT id, epoch, state, time_next, body, note FROM `" + table + "` ORDER BY id");
        ResultSet r = ps.executeQuery()) {
      while (r.next()) {
        out.add(
            List.of(
                r.getLong(1),
                r.getLong(2),
                r.getInt(3),
                r.getLong(4),
                String.valueOf(r.getString(5)),
                String.valueOf(r.getString(6))));
      }
    }
    return out;
  }

  @Test
  void aPendingEventIsReplacedInPlace() throws Exception {
    DebounceOutcome first =
        debounce("k", Map.of("body", "one", "note", "kept"), in(Duration.ofMinutes(1)));
    assertThat(first.result()).isEqualTo(Result.INSERTED);
    long before = (Long) rows().get(0).get(3);

    DebounceOutcome second = debounce("k", Map.of("body", "two"), in(Duration.ofMinutes(10)));
    assertThat(second).isEqualTo(new DebounceOutcome(first.id(), Result.REPLACED));
    List<Object> row = rows().get(0);
    assertThat(rows()).hasSize(1);
    assertThat(row.subList(0, 3)).containsExactly(first.id(), 0L, 0);
    // Pushed back by about nine minutes (the statements' own clock reads differ a little).
    assertThat((Long) row.get(3) - before).isGreaterThan(8 * 60_000_000_000L);
    // The columns given are replaced; those not given keep their values.
    assertThat(row.subList(4, 6)).containsExactly("two", "kept");

    // A debounce may also bring the due time forward.
    debounce("k", Map.of("body", "three"), EventOptions.DEFAULTS);
    assertThat((Long) rows().get(0).get(3)).isLessThan(before);
  }

  @Test
  void aFiredEventIsNotRewrittenAndThePurgeFreesTheKey() throws Exception {
    DebounceOutcome first = debounce("k", Map.of("body", "one"), EventOptions.DEFAULTS);
    long now = store.serverTimeNs();
    store.fire(List.of(new EventRef(first.id(), 0)), now + HOUR_NS);
    List<List<Object>> fired = rows();

    DebounceOutcome late = debounce("k", Map.of("body", "late"), in(Duration.ofMinutes(5)));
    assertThat(late).isEqualTo(new DebounceOutcome(first.id(), Result.NOT_PENDING));
    assertThat(late.unchanged()).isTrue();
    assertThat(rows()).isEqualTo(fired);

    // Acked: still not rewritten. Purged: the key inserts a new event.
    store.ack(List.of(new EventRef(first.id(), 1)), now - 10_000);
    assertThat(debounce("k", Map.of("body", "late"), EventOptions.DEFAULTS).result())
        .isEqualTo(Result.NOT_PENDING);
    assertThat(store.purge(now, 1000)).isEqualTo(1);
    DebounceOutcome again = debounce("k", Map.of("body", "again"), EventOptions.DEFAULTS);
    assertThat(again.result()).isEqualTo(Result.INSERTED);
    assertThat(again.id()).isNotEqualTo(first.id());
    assertThat(rows()).hasSize(1);
  }

  @Test
  void aFireThatPolledTheOldDueTimeLeavesTheReplacedRowAlone() throws Exception {
    DebounceOutcome first = debounce("k", Map.of("body", "one"), EventOptions.DEFAULTS);
    List<Object> polled = rows().get(0);
    debounce("k", Map.of("body", "two"), in(Duration.ofMinutes(10)));

    long now = store.serverTimeNs();
    FireResult out =
        store.fireAsPolled(
            List.of(new FireRef(first.id(), 0, (Long) polled.get(3))), () -> now + HOUR_NS);
    assertThat(out.fired()).isEmpty();
    assertThat(out.changed()).containsExactly(first.id());
    assertThat(rows().get(0).subList(1, 3)).containsExactly(0L, 0);
    assertThat(rows().get(0).get(4)).isEqualTo("two");
  }

  @Test
  void aFireWhileADebounceIsOpenSkipsTheRowAndFiresTheNewVersionAfter() throws Exception {
    DebounceOutcome first = debounce("k", Map.of("body", "one"), EventOptions.DEFAULTS);
    List<Object> polled = rows().get(0);
    long now = store.serverTimeNs();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThat(EventProducer.insertDebounced(c, table, "k", Map.of("body", "two")).result())
          .isEqualTo(Result.REPLACED);
      FireResult during =
          store.fireAsPolled(
              List.of(new FireRef(first.id(), 0, (Long) polled.get(3))), () -> now + HOUR_NS);
      assertThat(during.fired()).isEmpty();
      assertThat(during.locked()).containsExactly(first.id());
      c.commit();
    }
    List<Object> replaced = rows().get(0);
    FireResult after =
        store.fireAsPolled(
            List.of(new FireRef(first.id(), 0, (Long) replaced.get(3))), () -> now + HOUR_NS);
    assertThat(after.fired()).containsOnlyKeys(first.id());
    assertThat(rows().get(0).subList(1, 3)).containsExactly(1L, 1);
    assertThat(rows().get(0).get(4)).isEqualTo("two");
  }

  @Test
  void badInputIsRefusedAndWritesNothing() throws Exception {
    DebounceOutcome first = debounce("k", Map.of("body", "one"), EventOptions.DEFAULTS);
    List<List<Object>> before = rows();
    try (Connection c = ds.getConnection()) {
      assertThatThrownBy(() -> EventProducer.insertDebounced(c, table, "", Map.of("body", "x")))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> EventProducer.insertDebounced(c, table, null, Map.of("body", "x")))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(
              () -> EventProducer.insertDebounced(c, table, "x".repeat(256), Map.of("body", "x")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("255");
      assertThatThrownBy(
              () ->
                  EventProducer.insertDebounced(
                      c, table, "k", Map.of("body", "x"), EventOptions.builder().id(99L).build()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(table);
      assertThatThrownBy(
              () ->
                  EventProducer.insertDebounced(
                      c, table, "k", Map.of("body", "x", QueueConvention.DEDUP_KEY, "other")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("dedup_key");
      assertThatThrownBy(() -> EventProducer.insertDebounced(c, table, "k", Map.of("state", 1)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("system column");
      assertThatThrownBy(
              () -> EventProducer.insertDebounced(c, "bad name", "k", Map.of("body", "x")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("queue name");
      // Unknown columns: the database refuses, on the replace and on the insert alike.
      assertThatThrownBy(
              () -> EventProducer.insertDebounced(c, table, "k", Map.of("no_such_column", 1)))
          .isInstanceOf(SQLException.class);
      assertThatThrownBy(
              () -> EventProducer.insertDebounced(c, table, "new", Map.of("no_such_column", 1)))
          .isInstanceOf(SQLException.class);
    }
    assertThat(rows()).isEqualTo(before);
    assertThat(first.result()).isEqualTo(Result.INSERTED);

    String plain = table + "_plain";
    db.exec(
        QueueConvention.createTableSql(plain, List.of("body VARCHAR(100) NULL"), "sluice_queue"));
    try (Connection c = ds.getConnection()) {
      assertThatThrownBy(() -> EventProducer.insertDebounced(c, plain, "k", Map.of("body", "x")))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining(plain)
          .hasMessageContaining("dedup_key");
    }
  }

  /**
   * First debounces of distinct keys, each in an open transaction, all at once: a locking read of
   * an absent key would lock the index gap, and two transactions inserting into one gap deadlock.
   */
  @Test
  void firstDebouncesOfManyKeysInOpenTransactionsDoNotDeadlock() throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch inserted = new CountDownLatch(threads);
    List<Future<DebounceOutcome>> outs = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        String key = "key-" + t;
        outs.add(
            pool.submit(
                () -> {
                  try (Connection c = ds.getConnection()) {
                    c.setAutoCommit(false);
                    DebounceOutcome o =
                        EventProducer.insertDebounced(c, table, key, Map.of("body", key));
                    inserted.countDown();
                    // Every transaction holds what it took until all have inserted.
                    inserted.await(20, SECONDS);
                    c.commit();
                    return o;
                  }
                }));
      }
      for (Future<DebounceOutcome> f : outs) {
        assertThat(f.get(30, SECONDS).result()).isEqualTo(Result.INSERTED);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(rows()).hasSize(threads);
  }

  @Test
  void concurrentDebouncesOfOneKeyMakeOneRowAndOneInsert() throws Exception {
    int threads = 8;
    int rounds = 20;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<List<DebounceOutcome>>> outs = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        int me = t;
        outs.add(
            pool.submit(
                () -> {
                  go.await();
                  List<DebounceOutcome> mine = new ArrayList<>();
                  try (Connection c = ds.getConnection()) {
                    for (int r = 0; r < rounds; r++) {
                      mine.add(
                          EventProducer.insertDebounced(
                              c, table, "one", Map.of("body", me + "-" + r)));
                    }
                  }
                  return mine;
                }));
      }
      go.countDown();
      List<DebounceOutcome> all = new ArrayList<>();
      for (Future<List<DebounceOutcome>> f : outs) {
        all.addAll(f.get(60, SECONDS));
      }
      assertThat(all).hasSize(threads * rounds);
      assertThat(all).extracting(DebounceOutcome::result).containsOnlyOnce(Result.INSERTED);
      assertThat(all).extracting(DebounceOutcome::id).containsOnly(all.get(0).id());
    } finally {
      pool.shutdownNow();
    }
    List<List<Object>> rows = rows();
    assertThat(rows).hasSize(1);
    assertThat(rows.get(0).subList(1, 3)).containsExactly(0L, 0);
    // Every thread's last write is the last of its own; the row holds one of them.
    assertThat((String) rows.get(0).get(4)).endsWith("-" + (rounds - 1));
  }
}
