package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.Extension;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.db.store.Release;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every state change is a compare-and-set on (id, state, epoch), with exact per-event outcomes. */
class EventStoreTest {
  static TestDatabase db;
  static HikariDataSource ds;
  static int n;
  JdbcEventStore store;
  String table;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(EventStoreTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 4);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  @BeforeEach
  void newQueue() throws Exception {
    table = "store_q" + (++n);
    db.exec(
        QueueConvention.createTableSql(table, List.of("body VARCHAR(100) NULL"), "sluice_queue"));
    QueueTable q =
        new QueueCatalog(ds).inspect(new QueueCatalog.Candidate(table, "sluice_queue")).queue();
    store = new JdbcEventStore(ds, q);
  }

  long insert(String body) throws Exception {
    try (Connection c = ds.getConnection()) {
      return EventProducer.insert(c, table, Map.of("body", body));
    }
  }

  long now() {
    return store.serverTimeNs();
  }

  @Test
  void pollReadsDuePendingRowsWithUserColumns() throws Exception {
    long a = insert("a");
    try (Connection c = ds.getConnection()) {
      EventProducer.insert(
          c,
          table,
          Map.of("body", "later"),
          EventOptions.builder().delay(Duration.ofHours(1)).tenant("t1").priority(-5).build());
    }
    List<EventRow> rows = store.pollPending(now(), 10);
    assertThat(rows).extracting(EventRow::id).containsExactly(a);
    assertThat(rows.get(0).userColumns()).containsEntry("body", "a");
    assertThat(store.pollPending(now() + Duration.ofHours(2).toNanos(), 10))
        .hasSize(2)
        .last()
        .satisfies(
            r -> {
              assertThat(r.tenant()).isEqualTo("t1");
              assertThat(r.priority()).isEqualTo(-5);
            });
  }

  @Test
  void fireIsExactWhenSomeRowsChangedMeanwhile() throws Exception {
    long a = insert("a");
    long b = insert("b");
    long c = insert("c");
    db.exec("UPDATE " + table + " SET state = 4 WHERE id = " + b); // cancelled by SQL
    Map<EventRef, CasOutcome> out =
        store.fire(
            List.of(
                new EventRef(a, 0),
                new EventRef(b, 0),
                new EventRef(c, 7),
                new EventRef(99_999, 0)),
            now() + 1);
    assertThat(out)
        .containsEntry(new EventRef(a, 0), CasOutcome.APPLIED)
        .containsEntry(new EventRef(b, 0), CasOutcome.STALE)
        .containsEntry(new EventRef(c, 7), CasOutcome.STALE)
        .containsEntry(new EventRef(99_999, 0), CasOutcome.UNKNOWN);
    assertThat(store.counts().fired()).isEqualTo(1);
    assertThat(store.counts().pending()).isEqualTo(1);
    // A second fire of the same attempt loses: two managers cannot both fire it.
    assertThat(store.fire(List.of(new EventRef(a, 0)), now()))
        .containsEntry(new EventRef(a, 0), CasOutcome.STALE);
  }

  @Test
  void aBatchOfExtensionsIsOneCompareAndSetPerRowWithExactOutcomes() throws Exception {
    long a = insert("a");
    long b = insert("b");
    long c = insert("c");
    long firedAt = now();
    store.fire(
        List.of(new EventRef(a, 0), new EventRef(b, 0), new EventRef(c, 0)),
        firedAt + 5_000_000_000L);
    long later = firedAt + 60_000_000_000L;
    long earlier = firedAt + 1_000_000L; // before c's deadline: changes nothing, c stays as it is
    Map<EventRef, Extension.Outcome> out =
        store.extend(
            List.of(
                new Extension(new EventRef(a, 1), later),
                new Extension(new EventRef(b, 0), later), // a stale attempt
                new Extension(new EventRef(c, 1), earlier),
                new Extension(new EventRef(c + 1000, 1), later))); // no such event
    assertThat(out)
        .containsEntry(new EventRef(a, 1), new Extension.Outcome(CasOutcome.APPLIED, later))
        .containsEntry(new EventRef(b, 0), Extension.Outcome.STALE)
        .containsEntry(new EventRef(c + 1000, 1), Extension.Outcome.UNKNOWN);
    assertThat(out.get(new EventRef(c, 1)).cas()).isEqualTo(CasOutcome.APPLIED);
    assertThat(out.get(new EventRef(c, 1)).deadlineNs())
        .as("already later than asked: its deadline stays")
        .isGreaterThan(earlier);
    try (Connection conn = ds.getConnection();
        var st = conn.prepareStatement("SELECT time_next FROM " + table + " WHERE id = ?")) {
      st.setLong(1, b);
      try (var rs = st.executeQuery()) {
        rs.next();
        assertThat(rs.getLong(1)).as("the stale attempt's row is unchanged").isLessThan(later);
      }
    }
    // Both attempts of one event in one batch: each is its own compare-and-set.
    assertThat(
            store.extend(
                List.of(
                    new Extension(new EventRef(b, 0), later + 1),
                    new Extension(new EventRef(b, 1), later + 2))))
        .containsEntry(new EventRef(b, 0), Extension.Outcome.STALE)
        .containsEntry(new EventRef(b, 1), new Extension.Outcome(CasOutcome.APPLIED, later + 2));
  }

  @Test
  void anExpiryDoesNotUndoAnExtensionWrittenSinceItWasJudged() throws Exception {
    long a = insert("a");
    long b = insert("b");
    long firedAt = now();
    store.fire(List.of(new EventRef(a, 0), new EventRef(b, 0)), firedAt + 1_000_000L);
    long judged = firedAt + 2_000_000L; // both deadlines passed here
    long later = firedAt + 60_000_000_000L;
    assertThat(store.extend(List.of(new Extension(new EventRef(a, 1), later))))
        .containsEntry(new EventRef(a, 1), new Extension.Outcome(CasOutcome.APPLIED, later));
    Map<EventRef, CasOutcome> out =
        store.release(
            List.of(
                new Release(new EventRef(a, 1), judged, false).expiredAt(judged),
                new Release(new EventRef(b, 1), judged, false).expiredAt(judged)));
    assertThat(out)
        .containsEntry(new EventRef(a, 1), CasOutcome.STALE)
        .containsEntry(new EventRef(b, 1), CasOutcome.APPLIED);
    assertThat(store.ack(List.of(new EventRef(a, 1)), now()))
        .as("the extended attempt is still fired, its ack applies")
        .containsEntry(new EventRef(a, 1), CasOutcome.APPLIED);
    // Dead by an expiry obeys the same rule.
    long c = insert("c");
    store.fire(List.of(new EventRef(c, 0)), firedAt + 1_000_000L);
    store.extend(List.of(new Extension(new EventRef(c, 1), later)));
    assertThat(store.release(List.of(new Release(new EventRef(c, 1), 0, true).expiredAt(judged))))
        .containsEntry(new EventRef(c, 1), CasOutcome.STALE);
    assertThat(store.counts().dead()).isZero();
  }

  @Test
  void ackAndReleaseRequireTheFiredEpoch() throws Exception {
    long a = insert("a");
    long b = insert("b");
    store.fire(List.of(new EventRef(a, 0), new EventRef(b, 0)), now() + 1_000_000_000L);
    assertThat(store.ack(List.of(new EventRef(a, 0)), now()))
        .containsEntry(new EventRef(a, 0), CasOutcome.STALE);
    assertThat(store.ack(List.of(new EventRef(a, 1)), now()))
        .containsEntry(new EventRef(a, 1), CasOutcome.APPLIED);
    assertThat(store.ack(List.of(new EventRef(a, 1)), now()))
        .containsEntry(new EventRef(a, 1), CasOutcome.STALE);
    long retryAt = now() + 5_000_000_000L;
    assertThat(store.release(List.of(new Release(new EventRef(b, 1), retryAt, false))))
        .containsEntry(new EventRef(b, 1), CasOutcome.APPLIED);
    assertThat(store.pollPending(now(), 10)).isEmpty();
    assertThat(store.pollPending(retryAt, 10)).extracting(EventRow::epoch).containsExactly(1L);
    store.fire(List.of(new EventRef(b, 1)), now());
    store.release(List.of(new Release(new EventRef(b, 2), 0, true)));
    assertThat(store.counts().dead()).isEqualTo(1);
    assertThat(store.counts().acked()).isEqualTo(1);
  }

  @Test
  void expiredFiredFindsOnlyPassedDeadlines() throws Exception {
    long a = insert("a");
    long b = insert("b");
    store.fire(List.of(new EventRef(a, 0)), now() - 1);
    store.fire(List.of(new EventRef(b, 0)), now() + 60_000_000_000L);
    assertThat(store.expiredFired(now(), 10)).containsExactly(new EventRef(a, 1));
  }

  @Test
  void cancelOnlyTouchesPendingEvents() throws Exception {
    long a = insert("a");
    long b = insert("b");
    store.fire(List.of(new EventRef(b, 0)), now() + 1);
    Map<Long, CasOutcome> out = store.cancel(List.of(b, a, 5_555L), now());
    assertThat(out.keySet()).containsExactly(b, a, 5_555L);
    assertThat(out)
        .containsEntry(a, CasOutcome.APPLIED)
        .containsEntry(b, CasOutcome.STALE)
        .containsEntry(5_555L, CasOutcome.UNKNOWN);
    assertThat(store.counts().cancelled()).isEqualTo(1);
    assertThat(store.counts().fired()).isEqualTo(1);
  }

  @Test
  void purgeRemovesOnlyOldAckedAndCancelledRowsInBatches() throws Exception {
    long[] ids = new long[6];
    for (int i = 0; i < 6; i++) {
      ids[i] = insert("e" + i);
    }
    long t = now();
    store.fire(
        List.of(
            new EventRef(ids[0], 0),
            new EventRef(ids[1], 0),
            new EventRef(ids[2], 0),
            new EventRef(ids[3], 0)),
        t + 1);
    store.ack(List.of(new EventRef(ids[0], 1), new EventRef(ids[1], 1)), t - 10_000);
    store.release(List.of(new Release(new EventRef(ids[2], 1), 0, true))); // dead stays
    store.cancel(List.of(ids[4]), t - 10_000);
    // ids[3] fired, ids[5] pending: untouched. A recent ack is kept:
    long recent = insert("recent");
    store.fire(List.of(new EventRef(recent, 0)), t + 1);
    store.ack(List.of(new EventRef(recent, 1)), t + 1_000_000_000_000L);
    assertThat(store.purge(t, 2)).isEqualTo(2);
    assertThat(store.purge(t, 2)).isEqualTo(1);
    assertThat(store.purge(t, 2)).isZero();
    var c = store.counts();
    assertThat(c.acked()).isEqualTo(1);
    assertThat(c.cancelled()).isZero();
    assertThat(c.dead()).isEqualTo(1);
    assertThat(c.fired()).isEqualTo(1);
    assertThat(c.pending()).isEqualTo(1);
  }

  @Test
  void producerRefusesBadInputAndWritesNothing() throws Exception {
    try (Connection c = ds.getConnection()) {
      assertThatThrownBy(() -> EventProducer.insert(c, "bad name", Map.of("body", "x")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("queue name");
      assertThatThrownBy(() -> EventProducer.insert(c, table, Map.of("state", 2)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("system column");
      assertThatThrownBy(() -> EventProducer.insert(c, table, Map.of("body; DROP", 2)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("column name");
    }
    assertThat(store.counts().pending()).isZero();
  }

  @Test
  void batchesOfAnySizeFireAndAckEachEventOnce() throws Exception {
    // IN lists are padded to a power of two with a repeated id, and split past 1,024 ids: neither
    // may change an event twice, miss one, or miscount what applied.
    StringBuilder sb = new StringBuilder("INSERT INTO " + table + " (body) VALUES ");
    for (int i = 0; i < 1_100; i++) {
      sb.append(i == 0 ? "('b')" : ",('b')");
    }
    db.exec(sb.toString());
    List<EventRow> rows = store.pollPending(now(), 2_000);
    assertThat(rows).hasSize(1_100);
    List<EventRef> all = rows.stream().map(r -> new EventRef(r.id(), r.epoch())).toList();
    int from = 0;
    for (int size : List.of(1, 3, 5, 1_091)) {
      List<EventRef> batch = all.subList(from, from + size);
      from += size;
      Map<EventRef, CasOutcome> fired = store.fire(batch, now() + 60_000_000_000L);
      assertThat(fired).as("fire %d", size).hasSize(size).containsOnlyKeys(batch);
      assertThat(fired.values()).as("fire %d", size).containsOnly(CasOutcome.APPLIED);
      List<EventRef> next = batch.stream().map(r -> new EventRef(r.id(), r.epoch() + 1)).toList();
      assertThat(store.ack(next, now()).values())
          .as("ack %d", size)
          .containsOnly(CasOutcome.APPLIED);
      // A second fire of the same attempt is stale for every one of them.
      assertThat(store.fire(batch, now()).values()).containsOnly(CasOutcome.STALE);
    }
    assertThat(store.counts().acked()).isEqualTo(1_100);
    assertThat(store.counts().pending()).isZero();
  }
}
