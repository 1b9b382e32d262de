package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.db.store.Release;
import dev.sluice.db.store.TenantCounts;
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

/**
 * Operators' changes: dead events are listed, replayed (dead → pending, epoch kept) and purged
 * through the same compare-and-set on (id, state, epoch) as every other change; pause switches live
 * in sluice_queue_control.
 */
class DeadLettersTest {
  static TestDatabase db;
  static HikariDataSource ds;
  static int n;
  JdbcEventStore store;
  String table;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(DeadLettersTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 4);
    SluiceMigrations.migrateSluice(ds);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  @BeforeEach
  void newQueue() throws Exception {
    table = "dead_q" + (++n);
    db.exec(
        QueueConvention.createTableSql(table, List.of("body VARCHAR(100) NULL"), "sluice_queue"));
    QueueTable q =
        new QueueCatalog(ds).inspect(new QueueCatalog.Candidate(table, "sluice_queue")).queue();
    store = new JdbcEventStore(ds, q);
  }

  long insert(String body, String tenant) throws Exception {
    try (Connection c = ds.getConnection()) {
      return EventProducer.insert(
          c, table, Map.of("body", body), EventOptions.builder().tenant(tenant).build());
    }
  }

  /** Fires the event once and declares it dead; returns its ref as the dead row holds it. */
  EventRef kill(long id) {
    EventRef pending = new EventRef(id, 0);
    assertThat(store.fire(List.of(pending), store.serverTimeNs()))
        .containsValue(CasOutcome.APPLIED);
    EventRef fired = new EventRef(id, 1);
    assertThat(store.release(List.of(new Release(fired, 0, true))))
        .containsEntry(fired, CasOutcome.APPLIED);
    return fired;
  }

  @Test
  void replayMakesADeadEventPendingNowKeepingItsEpoch() throws Exception {
    EventRef dead = kill(insert("a", ""));
    long alive = insert("b", "");
    assertThat(store.listDead(0, 10)).extracting(EventRow::id).containsExactly(dead.id());
    assertThat(store.counts().dead()).isEqualTo(1);

    long before = store.serverTimeNs();
    assertThat(store.replayDead(List.of(dead))).containsEntry(dead, CasOutcome.APPLIED);
    long after = store.serverTimeNs();

    assertThat(store.counts().dead()).isZero();
    EventRow row =
        store.pollPending(after, 10).stream().filter(r -> r.id() == dead.id()).findFirst().get();
    assertThat(row.epoch()).isEqualTo(1);
    assertThat(row.timeNextNs()).isBetween(before, after);
    assertThat(row.userColumns()).containsEntry("body", "a");
    // Replaying again, or a pending event, changes nothing.
    assertThat(store.replayDead(List.of(dead))).containsEntry(dead, CasOutcome.STALE);
    assertThat(store.replayDead(List.of(new EventRef(alive, 0)))).containsValue(CasOutcome.STALE);
    assertThat(store.replayDead(List.of(new EventRef(999_999, 0))))
        .containsValue(CasOutcome.UNKNOWN);
  }

  @Test
  void epochsAreReadById() throws Exception {
    EventRef dead = kill(insert("a", ""));
    long alive = insert("b", "");
    assertThat(store.epochs(List.of(dead.id(), alive, 999_999L)))
        .containsOnly(Map.entry(dead.id(), 1L), Map.entry(alive, 0L));
    assertThat(store.epochs(List.of())).isEmpty();
  }

  @Test
  void replayWithAStaleEpochChangesNothing() throws Exception {
    EventRef dead = kill(insert("a", ""));
    EventRef stale = new EventRef(dead.id(), 0);
    assertThat(store.replayDead(List.of(stale))).containsEntry(stale, CasOutcome.STALE);
    assertThat(store.counts().dead()).isEqualTo(1);
  }

  @Test
  void purgeDeletesOnlyDeadEventsAtTheirEpoch() throws Exception {
    EventRef a = kill(insert("a", ""));
    EventRef b = kill(insert("b", ""));
    long alive = insert("c", "");
    Map<EventRef, CasOutcome> out =
        store.purgeDead(List.of(a, new EventRef(b.id(), 7), new EventRef(alive, 0)));
    assertThat(out)
        .containsEntry(a, CasOutcome.APPLIED)
        .containsEntry(new EventRef(b.id(), 7), CasOutcome.STALE)
        .containsEntry(new EventRef(alive, 0), CasOutcome.STALE);
    assertThat(store.listDead(0, 10)).extracting(EventRow::id).containsExactly(b.id());
    assertThat(store.counts().pending()).isEqualTo(1);
  }

  @Test
  void listDeadPagesById() throws Exception {
    long[] ids = new long[5];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = kill(insert("e" + i, "")).id();
    }
    List<EventRow> first = store.listDead(0, 2);
    assertThat(first).extracting(EventRow::id).containsExactly(ids[0], ids[1]);
    List<EventRow> rest = store.listDead(first.get(1).id(), 10);
    assertThat(rest).extracting(EventRow::id).containsExactly(ids[2], ids[3], ids[4]);
  }

  @Test
  void countsByTenantPutTheBusiestFirst() throws Exception {
    insert("x", "acme");
    insert("y", "acme");
    kill(insert("z", "acme"));
    try (Connection c = ds.getConnection()) {
      EventProducer.insert(
          c,
          table,
          Map.of("body", "later"),
          EventOptions.builder().tenant("globex").delay(Duration.ofHours(1)).build());
    }
    List<TenantCounts> t = store.countsByTenant(10);
    assertThat(t).extracting(TenantCounts::tenant).containsExactly("acme", "globex");
    assertThat(t.get(0).counts().pending()).isEqualTo(2);
    assertThat(t.get(0).counts().dead()).isEqualTo(1);
    assertThat(t.get(1).counts().oldestDueNs()).isGreaterThan(store.serverTimeNs());
    assertThat(store.countsByTenant(1)).hasSize(1);
  }

  @Test
  void markDeadKillsPendingAndFiredEventsAtTheirEpochAndRecordsWhy() throws Exception {
    long pending = insert("p", "");
    long fired = insert("f", "");
    long stale = insert("s", "");
    long acked = insert("a", "");
    assertThat(store.fire(List.of(new EventRef(fired, 0)), store.serverTimeNs()))
        .containsValue(CasOutcome.APPLIED);
    assertThat(store.fire(List.of(new EventRef(acked, 0)), store.serverTimeNs()))
        .containsValue(CasOutcome.APPLIED);
    assertThat(store.ack(List.of(new EventRef(acked, 1)), store.serverTimeNs()))
        .containsValue(CasOutcome.APPLIED);
    String huge = "x".repeat(5000);
    String odd = "bad\u0000value \uD83D\uDE00 \uD800 'quote' \\ \n end";
    Map<EventRef, String> why = new java.util.LinkedHashMap<>();
    why.put(new EventRef(pending, 0), huge);
    why.put(new EventRef(fired, 1), odd);
    why.put(new EventRef(stale, 5), "stale epoch");
    why.put(new EventRef(acked, 1), "acked meanwhile");
    why.put(new EventRef(999_999, 0), "no such row");

    Map<EventRef, CasOutcome> out = store.markDead(why);

    assertThat(out)
        .containsEntry(new EventRef(pending, 0), CasOutcome.APPLIED)
        .containsEntry(new EventRef(fired, 1), CasOutcome.APPLIED)
        .containsEntry(new EventRef(stale, 5), CasOutcome.STALE)
        .containsEntry(new EventRef(acked, 1), CasOutcome.STALE)
        .containsEntry(new EventRef(999_999, 0), CasOutcome.UNKNOWN);
    assertThat(store.listDead(0, 10)).extracting(EventRow::id).containsExactly(pending, fired);
    assertThat(store.listDead(0, 10)).extracting(EventRow::epoch).containsExactly(0L, 1L);
    Map<Long, String> reasons = store.deadReasons(List.of(pending, fired, stale, acked));
    assertThat(reasons).containsOnlyKeys(pending, fired);
    assertThat(reasons.get(pending)).hasSize(1024).startsWith("xxx").endsWith("...");
    assertThat(reasons.get(fired)).startsWith("bad?value ? ? 'quote' \\ ").endsWith(" end");
    assertThat(store.counts().pending()).isEqualTo(1);

    // Replay and purge take the reason away with the event's death.
    assertThat(store.replayDead(List.of(new EventRef(pending, 0))))
        .containsValue(CasOutcome.APPLIED);
    assertThat(store.purgeDead(List.of(new EventRef(fired, 1)))).containsValue(CasOutcome.APPLIED);
    assertThat(store.deadReasons(List.of(pending, fired))).isEmpty();
  }

  @Test
  void aDeathByMaxAttemptsRecordsItsReason() throws Exception {
    long id = insert("m", "");
    store.fire(List.of(new EventRef(id, 0)), store.serverTimeNs());
    EventRef fired = new EventRef(id, 1);
    assertThat(store.release(List.of(new Release(fired, 0, true, "max_attempts 1 reached"))))
        .containsEntry(fired, CasOutcome.APPLIED);
    assertThat(store.deadReasons(List.of(id))).containsEntry(id, "max_attempts 1 reached");
    // A stale release records nothing.
    long other = insert("n", "");
    EventRef never = new EventRef(other, 4);
    assertThat(store.release(List.of(new Release(never, 0, true, "nope"))))
        .containsEntry(never, CasOutcome.STALE);
    assertThat(store.deadReasons(List.of(other))).isEmpty();
  }

  @Test
  void pauseSwitchesLiveInTheControlTable() {
    SluiceMigrations.migrateSluice(ds);
    QueueControl control = new QueueControl(ds);
    assertThat(control.paused()).isEmpty();
    control.setPaused("orders", true);
    control.setPaused("billing", false);
    assertThat(control.paused()).containsEntry("orders", true).containsEntry("billing", false);
    control.setPaused("orders", false);
    assertThat(control.paused()).containsEntry("orders", false);
  }
}
