package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.db.store.KeyPlace;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An ordered queue's key checks cost a few index entries, whatever the key's backlog: the polls'
 * place columns and the read of a key's first pending row read about as many rows with a 5,000
 * event backlog behind the key as without (counted from the server's handler counters).
 */
class OrderedStoreTest {
  static final long HOUR = Duration.ofHours(1).toNanos();
  static TestDatabase db;
  static HikariDataSource ds;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(OrderedStoreTest.class);
    ds = DataSources.pool("ordered-store", db.url(), db.user(), db.password(), 4);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  /** The server's index reads so far (every session: this test is alone on its server). */
  static long indexReads() throws Exception {
    long n = 0;
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_read_key',"
                    + " 'Handler_read_next', 'Handler_read_prev', 'Handler_read_first')")) {
      while (rs.next()) {
        n += rs.getLong(2);
      }
    }
    return n;
  }

  /** The server's statements of these kinds so far ({@code Com_select}, ...; every session). */
  static Map<String, Long> statements() throws Exception {
    Map<String, Long> out = new HashMap<>();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_update',"
                    + " 'Com_commit', 'Com_rollback', 'Com_set_option')")) {
      while (rs.next()) {
        out.put(rs.getString(1).toLowerCase(Locale.ROOT).substring(4), rs.getLong(2));
      }
    }
    return out;
  }

  /** The statements of each kind since {@code before} (a {@link #statements} reading). */
  static Map<String, Long> since(Map<String, Long> before) throws Exception {
    Map<String, Long> out = new HashMap<>();
    statements().forEach((k, v) -> out.put(k, v - before.get(k)));
    return out;
  }

  static JdbcEventStore queue(String table) throws Exception {
    String comment = "sluice_queue ordering=key ordering_column=k";
    db.exec(
        QueueConvention.createTableSql(
            table,
            List.of("k VARCHAR(20) NULL", "KEY `sluice_ordering` (`k`, `state`, `id`)"),
            comment));
    QueueTable q = new QueueCatalog(ds).inspect(new QueueCatalog.Candidate(table, comment)).queue();
    return new JdbcEventStore(ds, q);
  }

  @Test
  void aKeyCheckReadsAFewEntriesWhateverTheKeysBacklog() throws Exception {
    JdbcEventStore store = queue("ord_cost");
    StringBuilder sb = new StringBuilder("INSERT INTO ord_cost (k) VALUES ('quiet')");
    for (int i = 0; i < 5000; i++) {
      sb.append(",('hot')");
    }
    db.exec(sb.toString());
    long now = store.serverTimeNs();
    // The first poll says where each row stands: the heads first, the rest behind.
    List<EventRow> rows = store.pollPending(now + HOUR, 10_000);
    assertThat(rows).hasSize(5001);
    List<EventRef> behind = new ArrayList<>();
    for (EventRow r : rows) {
      if (r.keyPlace() == KeyPlace.BEHIND) {
        behind.add(new EventRef(r.id(), r.epoch()));
      }
    }
    assertThat(behind).hasSize(4999);
    assertThat(store.hold(behind)).hasSize(4999).doesNotContainValue(CasOutcome.STALE);

    // Now the poll reads the two heads only, and checks each with a few index entries.
    long before = indexReads();
    List<EventRow> heads = store.pollPending(now + HOUR, 100);
    long pollReads = indexReads() - before;
    assertThat(heads).extracting(EventRow::keyPlace).containsOnly(KeyPlace.FIRST);
    assertThat(heads).hasSize(2);
    assertThat(pollReads).as("index reads of a poll of 2 heads").isLessThan(40);

    before = indexReads();
    List<EventRow> first = store.firstPendingOfKeys(List.of("hot", "quiet"));
    long firstReads = indexReads() - before;
    assertThat(first).hasSize(2);
    assertThat(firstReads).as("index reads of 2 keys' first rows").isLessThan(40);

    // One key alone is read by its own seeks (grouped, the servers read all of a lone key).
    before = indexReads();
    assertThat(store.firstPendingOfKeys(List.of("hot"))).hasSize(1);
    assertThat(indexReads() - before).as("index reads of the hot key's first row").isLessThan(20);

    // Many keys, the hot one among them, in one statement: a few entries per key.
    List<Object> many = new ArrayList<>(List.of("hot", "quiet"));
    for (int i = 0; i < 200; i++) {
      many.add("none" + i);
    }
    Map<String, Long> statementsBefore = statements();
    before = indexReads();
    assertThat(store.firstPendingOfKeys(many)).hasSize(2);
    assertThat(indexReads() - before).as("index reads of 202 keys' first rows").isLessThan(2_000);
    assertThat(since(statementsBefore))
        .as("statements of 202 keys' first rows: their edges, then their rows")
        .containsEntry("select", 2L);

    before = indexReads();
    // The recheck: the held rows' keys, then each key's first pending row; none is a turn.
    assertThat(store.firstPendingOfKeys(store.heldKeys(10)))
        .noneMatch(r -> r.held() && !r.waitsForKey());
    assertThat(indexReads() - before)
        .as("the recheck reads each held row once, with a few entries for each")
        .isLessThan(5000L * 8);
  }

  @Test
  void aTurnIsTwoReadsAndOneWriteAndTheWindowsOwnRowsCostNoKeyRead() throws Exception {
    JdbcEventStore store = queue("ord_turns");
    StringBuilder sb = new StringBuilder("INSERT INTO ord_turns (k) VALUES ");
    for (int i = 0; i < 100; i++) {
      sb.append(i == 0 ? "" : ",").append("('k").append(i % 50).append("')");
    }
    db.exec(sb.toString());
    long now = store.serverTimeNs();
    List<EventRow> rows = store.pollPending(now + HOUR, 1000);
    List<EventRef> behind = new ArrayList<>();
    Set<Long> heads = new HashSet<>();
    for (EventRow r : rows) {
      if (r.waitsForKey()) {
        behind.add(new EventRef(r.id(), r.epoch()));
      } else {
        heads.add(r.id());
      }
    }
    assertThat(heads).hasSize(50);

    // The hold of 50 rows: one UPDATE, no transaction around it.
    Map<String, Long> before = statements();
    assertThat(store.hold(behind))
        .hasSize(50)
        .containsOnlyKeys(behind)
        .doesNotContainValue(CasOutcome.STALE);
    assertThat(since(before))
        .as("statements of a hold of 50 rows")
        .containsEntry("update", 1L)
        .containsEntry("commit", 0L)
        .containsEntry("set_option", 0L);

    // A poll that reads again the rows the caller holds as heads reads no key: one statement.
    store.knownHeads(heads::contains);
    before = statements();
    long reads = indexReads();
    assertThat(store.pollPending(now + HOUR, 1000))
        .hasSize(50)
        .extracting(EventRow::keyPlace)
        .containsOnly(KeyPlace.FIRST);
    long pollReads = indexReads() - reads;
    assertThat(since(before)).as("statements of a poll of known heads").containsEntry("select", 1L);
    assertThat(pollReads).as("index reads of a poll of 50 known heads").isLessThan(60);

    // A row not known is placed as before (one more statement for its key).
    store.knownHeads(id -> false);
    before = statements();
    assertThat(store.pollPending(now + HOUR, 1000)).hasSize(50);
    assertThat(since(before))
        .as("statements of a poll of unknown heads")
        .containsEntry("select", 2L);
    store.knownHeads(null);

    // The heads settle (acked by hand); each key's turn: one read of where each key's events stand,
    // one of the keys' first pending rows by id, and one UPDATE that releases those whose turn it
    // is.
    db.exec("UPDATE ord_turns SET state = 2 WHERE time_next < " + QueueConvention.HELD_NS);
    List<Object> keys = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      keys.add("k" + i);
    }
    before = statements();
    reads = indexReads();
    List<EventRow> firsts = store.firstPendingOfKeys(keys);
    long firstReads = indexReads() - reads;
    assertThat(firsts).hasSize(50).allMatch(r -> r.held() && !r.waitsForKey());
    List<EventRef> turn = new ArrayList<>();
    firsts.forEach(r -> turn.add(new EventRef(r.id(), r.epoch())));
    assertThat(store.unhold(turn)).containsOnlyKeys(turn).doesNotContainValue(CasOutcome.STALE);
    assertThat(since(before))
        .as("statements of 50 keys' turns")
        .containsEntry("select", 2L)
        .containsEntry("update", 1L)
        .containsEntry("commit", 0L)
        .containsEntry("set_option", 0L);
    assertThat(firstReads).as("index reads of 50 keys' first rows and places").isLessThan(50L * 8);

    // A release of a row released already finds the change made, and does not make it twice.
    assertThat(store.unhold(turn.subList(0, 1))).containsValue(CasOutcome.APPLIED);
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT time_next FROM ord_turns WHERE id = " + turn.get(0).id())) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getLong(1)).isEqualTo(firsts.get(0).timeNextNs() - QueueConvention.HELD_NS);
    }
  }

  /**
   * Keys the column's collation calls equal ('Acct' and 'acct' under utf8mb4_unicode_ci) are one
   * key to the checks, as they are to the server's seeks: the later event waits behind the earlier,
   * whichever spelling the server gives a group.
   */
  @Test
  void spellingsTheCollationCallsEqualAreOneKey() throws Exception {
    JdbcEventStore store = queue("ord_spelling");
    db.exec("INSERT INTO ord_spelling (k) VALUES ('Acct'), ('acct'), ('other'), ('ACCT')");
    long now = store.serverTimeNs();
    List<EventRow> rows = store.pollPending(now + HOUR, 100);
    assertThat(rows)
        .extracting(EventRow::keyPlace)
        .containsExactly(KeyPlace.FIRST, KeyPlace.BEHIND, KeyPlace.FIRST, KeyPlace.BEHIND);

    // The first settles; each spelling's first pending row is the second event, first now.
    db.exec("UPDATE ord_spelling SET state = 2 WHERE id = " + rows.get(0).id());
    for (List<Object> keys :
        List.<List<Object>>of(List.of("ACCT", "other"), List.of("acct", "Acct", "other"))) {
      List<EventRow> firsts = store.firstPendingOfKeys(keys);
      assertThat(firsts)
          .extracting(EventRow::id)
          .contains(rows.get(1).id(), rows.get(2).id())
          .doesNotContain(rows.get(3).id());
      assertThat(firsts).extracting(EventRow::keyPlace).containsOnly(KeyPlace.FIRST);
    }
    assertThat(store.pollPending(now + HOUR, 100))
        .extracting(EventRow::keyPlace)
        .containsExactly(KeyPlace.FIRST, KeyPlace.FIRST, KeyPlace.BEHIND);
  }
}
