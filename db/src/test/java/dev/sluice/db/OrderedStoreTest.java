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
import java.util.List;
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

    before = indexReads();
    // The recheck: the held rows' keys, then each key's first pending row; none is a turn.
    assertThat(store.firstPendingOfKeys(store.heldKeys(10)))
        .noneMatch(r -> r.held() && !r.waitsForKey());
    assertThat(indexReads() - before)
        .as("the recheck reads each held row once, with a few entries for each")
        .isLessThan(5000L * 8);
  }
}
