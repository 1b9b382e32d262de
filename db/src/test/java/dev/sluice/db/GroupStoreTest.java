package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.client.QueueColumns;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.JdbcGroupStore;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The group store at scale: one group of 10,000 children and 300 groups of 3. A check that a group
 * may complete reads the children it passes once over the group's checks, not at each (counted from
 * the server's handler counters; on earlier versions' index, a few entries whatever the group's
 * size); every group completes once; a sweep pages through the sealed groups.
 */
class GroupStoreTest {
  static TestDatabase db;
  static HikariDataSource ds;

  /**
   * Checks measured together: the server's counters are global, and MySQL 8 counts its own
   * background reads (statistics after a large UPDATE) there too; per check they are noise.
   */
  static final int CHECKS = 20;

  /*
   * A check of the big group reads 3 to 5 index entries on MariaDB. On MySQL 8.0.15 some runs read
   * about 900 per check (three per sealed group: the plan then walks the 301 sealed groups), others
   * a few; the bound below tells either from a check that reads the whole group (10,003, as one
   * with an IN list of states did).
   */

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(GroupStoreTest.class);
    ds = DataSources.pool("group-store", db.url(), db.user(), db.password(), 4);
    SluiceMigrations.migrateSluice(ds);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  static long longOf(String sql) throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
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

  static QueueTable table(String name, String column) throws Exception {
    return table(name, column, QueueColumns.GROUP_INDEX_DEFINITION);
  }

  /** Earlier versions' group index, which still serves (one entry read per check and state). */
  static final String EARLIER_GROUP_INDEX = "KEY `sluice_group` (`group_key`, `state`)";

  static QueueTable table(String name, String column, String groupIndex) throws Exception {
    List<String> cols = new ArrayList<>(List.of("`n` INT NULL", column));
    if (column.equals(QueueColumns.GROUP_KEY_DEFINITION)) {
      cols.add(groupIndex);
    }
    db.exec(QueueConvention.createTableSql(name, cols, "sluice_queue"));
    return new QueueCatalog(ds).inspect(new QueueCatalog.Candidate(name, "sluice_queue")).queue();
  }

  /** Inserts {@code n} children of each key, in one statement per 5,000 rows. */
  static void children(String table, List<String> keys, int n) throws Exception {
    StringBuilder sb = new StringBuilder();
    int rows = 0;
    for (String k : keys) {
      for (int i = 0; i < n; i++) {
        sb.append(sb.length() == 0 ? "" : ",")
            .append("(")
            .append(i)
            .append(",'")
            .append(k)
            .append("')");
        if (++rows % 5000 == 0) {
          db.exec("INSERT INTO " + table + " (n, group_key) VALUES " + sb);
          sb.setLength(0);
        }
      }
    }
    if (sb.length() > 0) {
      db.exec("INSERT INTO " + table + " (n, group_key) VALUES " + sb);
    }
  }

  static long completion(String table, String key) throws Exception {
    db.exec("INSERT INTO " + table + " (n, completes_group) VALUES (0, '" + key + "')");
    return longOf("SELECT MAX(id) FROM " + table);
  }

  /** On earlier versions' index ({@code group_key}, {@code state}), which still serves. */
  @Test
  void aBigGroupAndManySmallOnesCompleteOnceWithChecksOfAFewEntries() throws Exception {
    QueueTable kids = table("gs_kids", QueueColumns.GROUP_KEY_DEFINITION, EARLIER_GROUP_INDEX);
    QueueTable done = table("gs_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);

    children("gs_kids", List.of("big"), 10_000);
    List<String> small = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      small.add("small-" + i);
    }
    children("gs_kids", small, 3);
    assertThat(store.seal(done, new EventRef(completion("gs_done", "big"), 0), "big", false, now))
        .isEqualTo(JdbcGroupStore.Sealed.SEALED);
    for (String k : small) {
      assertThat(store.seal(done, new EventRef(completion("gs_done", k), 0), k, false, now))
          .isEqualTo(JdbcGroupStore.Sealed.SEALED);
    }
    // A second completion event of a sealed group finds it taken.
    assertThat(store.seal(done, new EventRef(completion("gs_done", "big"), 0), "big", false, now))
        .isEqualTo(JdbcGroupStore.Sealed.TAKEN);
    db.exec("DELETE FROM gs_done WHERE id = (SELECT MAX(id) FROM (SELECT id FROM gs_done) x)");
    assertThat(store.openCount()).isEqualTo(301);

    // Every child but one of the big group acked: its check reads a few entries, not 10,000.
    db.exec("UPDATE gs_kids SET state = 2 WHERE group_key = 'big' AND n > 0");
    // The store reads the grouped tables from the catalog at most once a second (on MySQL 8 the
    // data dictionary's reads count as index reads too): read them just before measuring (the
    // checks take well under a second).
    store.grouped();
    long before = indexReads();
    for (int i = 0; i < CHECKS; i++) {
      assertThat(store.completable(List.of("big"))).isEmpty();
    }
    assertThat((indexReads() - before) / CHECKS)
        .as("index reads per check of one group: far fewer than its 10,000 children")
        .isLessThan(2000);
    assertThat(store.complete("big", now)).isNull();
    assertThat(longOf("SELECT COUNT(*) FROM gs_done WHERE time_next >= " + QueueConvention.HELD_NS))
        .isEqualTo(301);

    db.exec("UPDATE gs_kids SET state = 2 WHERE group_key = 'big'");
    store.grouped();
    before = indexReads();
    for (int i = 0; i < CHECKS; i++) {
      assertThat(store.completable(List.of("big"))).containsExactly("big");
    }
    assertThat((indexReads() - before) / CHECKS)
        .as("index reads per check of one group: far fewer than its 10,000 children")
        .isLessThan(2000);
    JdbcGroupStore.Group big = store.complete("big", now);
    assertThat(big).isNotNull();
    assertThat(big.acked()).isEqualTo(10_000);
    assertThat(store.complete("big", now)).as("a group completes once").isNull();

    // The small groups: one child of each dead, then the rest acked; sweeps page through them.
    db.exec("UPDATE gs_kids SET state = 3 WHERE group_key LIKE 'small-%' AND n = 0");
    assertThat(store.sweep(null, 1000).completable()).isEmpty();
    db.exec("UPDATE gs_kids SET state = 2 WHERE group_key LIKE 'small-%' AND n > 0");
    int completed = 0;
    JdbcGroupStore.SweepMark at = null;
    for (int pass = 0; pass < 10; pass++) {
      JdbcGroupStore.SweepPage page = store.sweep(at, 100);
      at = page.next();
      List<String> due = page.completable();
      assertThat(due).as("page %s", pass).hasSize(pass < 3 ? 100 : 0);
      assertThat(at == null).as("the last page").isEqualTo(pass >= 3);
      if (due.isEmpty()) {
        break;
      }
      for (String k : due) {
        JdbcGroupStore.Group g = store.complete(k, now);
        assertThat(g).isNotNull();
        assertThat(g.acked()).isEqualTo(2);
        assertThat(g.dead()).isEqualTo(1);
        completed++;
      }
    }
    assertThat(completed).isEqualTo(300);
    assertThat(store.openCount()).isZero();
    // Every completion event was released, once.
    assertThat(longOf("SELECT COUNT(*) FROM gs_done WHERE time_next >= " + QueueConvention.HELD_NS))
        .isZero();
    assertThat(
            longOf(
                "SELECT COUNT(*) FROM sluice_group WHERE state = 'completed'"
                    + " AND (group_key = 'big' OR group_key LIKE 'small-%')"))
        .isEqualTo(301);
  }

  /**
   * On the group index of the convention, ({@code group_key}) alone, which a child's fire and ack
   * leave alone: a check reads the group's children from where the last one found its first open
   * child, so the children it passes (settled) are read once over the group's checks, and a check
   * that finds the group open at once reads a few entries.
   */
  @Test
  void checksOfABigGroupReadEachSettledChildOnce() throws Exception {
    table("gm_kids", QueueColumns.GROUP_KEY_DEFINITION);
    QueueTable done = table("gm_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    seal(store, "gm_kids", done, List.of("huge"), now, 10_000);
    store.grouped();

    long before = indexReads();
    for (int i = 0; i < CHECKS; i++) {
      assertThat(store.completable(List.of("huge"))).as("all pending").isEmpty();
    }
    assertThat((indexReads() - before) / CHECKS)
        .as("index reads per check of a group whose first child is open")
        .isLessThan(1000);

    // The first 9,000 settled (acked, dead, cancelled): the next check reads past them, once.
    db.exec("UPDATE gm_kids SET state = 2 + n % 3 WHERE group_key = 'huge' AND n < 9000");
    store.grouped();
    before = indexReads();
    assertThat(store.completable(List.of("huge"))).isEmpty();
    assertThat(indexReads() - before).as("the first check passes 9,000").isGreaterThan(9000);
    before = indexReads();
    for (int i = 0; i < CHECKS; i++) {
      assertThat(store.completable(List.of("huge"))).isEmpty();
    }
    assertThat((indexReads() - before) / CHECKS)
        .as("index reads per check after it: from the first open child")
        .isLessThan(1000);

    db.exec("UPDATE gm_kids SET state = 2 WHERE group_key = 'huge' AND n >= 9000");
    assertThat(store.completable(List.of("huge"))).containsExactly("huge");
    JdbcGroupStore.Group g = store.complete("huge", now);
    assertThat(g).isNotNull();
    assertThat(g.acked() + g.dead() + g.cancelled()).isEqualTo(10_000);
    assertThat(g.dead()).isEqualTo(3000);
  }

  /**
   * A check's marks are hints: a child they passed that is open again (a dead child replayed) or
   * that came late with a lower id, is seen by the count under the group's lock that every
   * completion makes, so the group does not complete; the marks are forgotten, and the next check
   * reads the group from its first child and finds it open.
   */
  @Test
  void aChildTheChecksPassedKeepsItsGroupOpen() throws Exception {
    table("gr_kids", QueueColumns.GROUP_KEY_DEFINITION);
    QueueTable done = table("gr_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    seal(store, "gr_kids", done, List.of("replayed"), now, 10);
    store.grouped();
    db.exec("UPDATE gr_kids SET state = 3 WHERE n = 2"); // dead
    db.exec("UPDATE gr_kids SET state = 2 WHERE n < 5 AND n <> 2"); // acked
    assertThat(store.completable(List.of("replayed"))).isEmpty(); // first open: n = 5

    db.exec("UPDATE gr_kids SET state = 0 WHERE n = 2"); // replayed: pending again
    db.exec("UPDATE gr_kids SET state = 2 WHERE n >= 5");
    assertThat(store.completable(List.of("replayed")))
        .as("the check reads on from n = 5: it does not see n = 2")
        .containsExactly("replayed");
    assertThat(store.completeAll(List.of("replayed"), now, () -> true))
        .as("the completion's count does")
        .isEmpty();
    assertThat(store.completable(List.of("replayed")))
        .as("read from the first child again")
        .isEmpty();
    assertThat(longOf("SELECT COUNT(*) FROM gr_done WHERE time_next >= " + QueueConvention.HELD_NS))
        .as("the completion event still held")
        .isEqualTo(1);

    db.exec("UPDATE gr_kids SET state = 2 WHERE n = 2");
    assertThat(store.completable(List.of("replayed"))).containsExactly("replayed");
    JdbcGroupStore.Group g = store.completeAll(List.of("replayed"), now, () -> true).get(0);
    assertThat(g.acked()).isEqualTo(10);
  }

  /**
   * A {@code fail_fast} group completes when one child is dead, wherever it is: past its first open
   * child too, on either index; a {@code wait_all} group beside it waits.
   */
  @Test
  void aFailFastGroupSeesADeadChildPastItsFirstOpenOne() throws Exception {
    table("gx_kids", QueueColumns.GROUP_KEY_DEFINITION);
    table("gx_earlier", QueueColumns.GROUP_KEY_DEFINITION, EARLIER_GROUP_INDEX);
    QueueTable done = table("gx_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    for (String kids : List.of("gx_kids", "gx_earlier")) {
      children(kids, List.of(kids + "-fast", kids + "-all"), 10);
      assertThat(
              store.seal(
                  done,
                  new EventRef(completion("gx_done", kids + "-fast"), 0),
                  kids + "-fast",
                  true,
                  now))
          .isEqualTo(JdbcGroupStore.Sealed.SEALED);
      assertThat(
              store.seal(
                  done,
                  new EventRef(completion("gx_done", kids + "-all"), 0),
                  kids + "-all",
                  false,
                  now))
          .isEqualTo(JdbcGroupStore.Sealed.SEALED);
    }
    store.grouped();
    List<String> keys = List.of("gx_kids-fast", "gx_kids-all", "gx_earlier-fast", "gx_earlier-all");
    assertThat(store.completable(keys)).isEmpty();
    for (String kids : List.of("gx_kids", "gx_earlier")) {
      db.exec("UPDATE " + kids + " SET state = 3 WHERE n = 7"); // dead, behind open children
    }
    assertThat(store.completable(keys))
        .containsExactlyInAnyOrder("gx_kids-fast", "gx_earlier-fast");
    assertThat(store.completeAll(keys, now, () -> true))
        .extracting(JdbcGroupStore.Group::key)
        .containsExactlyInAnyOrder("gx_kids-fast", "gx_earlier-fast");
    for (String kids : List.of("gx_kids", "gx_earlier")) {
      db.exec("UPDATE " + kids + " SET state = 2 WHERE state IN (0, 1)");
    }
    assertThat(store.completeAll(keys, now, () -> true))
        .extracting(JdbcGroupStore.Group::key)
        .as("the wait_all groups, once every child is settled")
        .containsExactlyInAnyOrder("gx_kids-all", "gx_earlier-all");
  }

  /**
   * A check names the table's group index (MySQL 8 reads the primary key in order otherwise). When
   * a DBA renames it, the check that names the old one fails, nothing changes, and the next reads
   * the tables' indexes again and succeeds.
   */
  @Test
  void aRenamedGroupIndexFailsOneCheckOnly() throws Exception {
    table("gi_kids", QueueColumns.GROUP_KEY_DEFINITION, "KEY `my_groups` (`group_key`)");
    QueueTable done = table("gi_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    seal(store, "gi_kids", done, List.of("renamed"), now);
    store.grouped();
    assertThat(store.completable(List.of("renamed"))).isEmpty();

    db.exec("ALTER TABLE gi_kids RENAME INDEX my_groups TO sluice_group");
    db.exec("UPDATE gi_kids SET state = 2");
    assertThatThrownBy(() -> store.completable(List.of("renamed")))
        .hasMessageContaining("check of groups");
    assertThat(store.completable(List.of("renamed"))).containsExactly("renamed");
    assertThat(store.completeAll(List.of("renamed"), now, () -> true)).hasSize(1);
  }

  /**
   * The store's list of grouped tables may be up to a second old. A completion reads it anew: a
   * group whose children are in a table created after the list was read does not complete while
   * they are pending (a cached list without that table counted none), and a completion event in a
   * table created just as late is released, not left held.
   */
  @Test
  void aGroupInTablesNewerThanTheCachedListCompletesOnlyWhenItsChildrenSettle() throws Exception {
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    store.grouped(); // the list of grouped tables is read (and cached) now
    QueueTable kids = table("late_kids", QueueColumns.GROUP_KEY_DEFINITION);
    QueueTable done = table("late_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    children(kids.name(), List.of("late"), 2);
    long completion = completion(done.name(), "late");
    assertThat(store.seal(done, new EventRef(completion, 0), "late", false, now))
        .isEqualTo(JdbcGroupStore.Sealed.SEALED);

    assertThat(store.complete("late", now))
        .as("a group with two pending children, in a table newer than the cached list")
        .isNull();

    db.exec("UPDATE late_kids SET state = 2");
    JdbcGroupStore.Group g = store.complete("late", now);
    assertThat(g).isNotNull();
    assertThat(g.acked()).isEqualTo(2);
    assertThat(longOf("SELECT time_next < " + QueueConvention.HELD_NS + " FROM late_done"))
        .as("the completion event released")
        .isEqualTo(1);
  }

  /**
   * The catalog's read of the shard's tables is the dearest statement of a completion (on MariaDB
   * it opens every table of the schema). A completion reads it only when the list cached was read
   * before the last of its groups was sealed (plus the sealing clock's slack): a batch of groups
   * sealed a while ago is locked and counted (a SELECT, and one per grouped table of the shard),
   * one just sealed takes 2 more (the database's clock, then the catalog).
   */
  @Test
  void groupsSealedBeforeTheCachedListCompleteWithoutReadingTheCatalog() throws Exception {
    table("gc_kids", QueueColumns.GROUP_KEY_DEFINITION);
    QueueTable done = table("gc_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    List<String> old = List.of("old-1", "old-2", "old-3");
    seal(store, "gc_kids", done, old, now - java.util.concurrent.TimeUnit.SECONDS.toNanos(10));
    List<String> fresh = List.of("fresh-1");
    seal(store, "gc_kids", done, fresh, now);
    db.exec("UPDATE gc_kids SET state = 2");
    store.grouped(); // the list is read (and cached) now: after the old seals, not after the new

    int grouped = store.grouped().size();
    long selects = selects();
    assertThat(store.completeAll(old, now, () -> true)).hasSize(3);
    assertThat(selects() - selects)
        .as("the groups locked, their children counted in each grouped table")
        .isEqualTo(1 + grouped);
    selects = selects();
    assertThat(store.completeAll(fresh, now, () -> true)).hasSize(1);
    assertThat(selects() - selects)
        .as("a group sealed within the slack of the list's read: the catalog read again")
        .isEqualTo(1 + grouped + 2);
  }

  /**
   * A sweep checks a page of the sealed groups, oldest first, and the next sweep goes on from where
   * it stopped: a group that may complete behind a page of open ones is found by the next page, and
   * the page after the newest starts again from the oldest.
   */
  @Test
  void aSweepGoesOnFromWhereTheLastStopped() throws Exception {
    table("gw_kids", QueueColumns.GROUP_KEY_DEFINITION);
    QueueTable done = table("gw_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    // Sealed at 1..4 ns: older than any group of this class's other tests.
    for (int i = 1; i <= 4; i++) {
      seal(store, "gw_kids", done, List.of("w-" + i), i);
    }
    db.exec("UPDATE gw_kids SET state = 2 WHERE group_key = 'w-4'");
    store.grouped();

    JdbcGroupStore.SweepPage first = store.sweep(null, 3);
    assertThat(first.completable()).as("the oldest three, all open").isEmpty();
    assertThat(first.next()).isNotNull();
    JdbcGroupStore.SweepPage page = store.sweep(first.next(), 3);
    assertThat(page.completable()).contains("w-4").doesNotContain("w-1", "w-2", "w-3");
    for (int i = 0; i < 100 && page.next() != null; i++) {
      page = store.sweep(page.next(), 3);
    }
    assertThat(page.next()).as("the newest reached").isNull();
    assertThat(store.sweep(null, 3).completable()).as("and again from the oldest").isEmpty();
  }

  /**
   * The groups of a poll's completion events are sealed together: their rows and the holds of their
   * events in one transaction of two statements. When one of them cannot be (its group has a row,
   * its event changed), nothing is written, and each sealed on its own tells which.
   */
  @Test
  void aPollsGroupsAreSealedInOneTransaction() throws Exception {
    table("gt_kids", QueueColumns.GROUP_KEY_DEFINITION);
    QueueTable done = table("gt_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    Map<String, EventRef> twenty = new LinkedHashMap<>();
    for (int i = 0; i < 20; i++) {
      twenty.put("t-" + i, new EventRef(completion(done.name(), "t-" + i), 0));
    }
    long commits = status("Com_commit");
    long inserts = status("Com_insert_select") + status("Com_insert");
    long updates = status("Com_update");
    assertThat(store.sealTogether(done, twenty, false, now)).isTrue();
    assertThat(status("Com_commit") - commits).as("one transaction").isEqualTo(1);
    assertThat(status("Com_insert_select") + status("Com_insert") - inserts).isEqualTo(1);
    assertThat(status("Com_update") - updates).isEqualTo(1);
    assertThat(store.find(twenty.keySet())).hasSize(20);
    assertThat(longOf("SELECT COUNT(*) FROM gt_done WHERE time_next >= " + QueueConvention.HELD_NS))
        .isEqualTo(20);

    // One group of the batch has its row already: nothing written.
    Map<String, EventRef> taken = new LinkedHashMap<>();
    taken.put("u-1", new EventRef(completion(done.name(), "u-1"), 0));
    taken.put("t-3", new EventRef(completion(done.name(), "t-3"), 0));
    assertThat(store.sealTogether(done, taken, false, now)).isFalse();
    assertThat(store.find(List.of("u-1"))).isEmpty();
    // One event of the batch changed since it was read: nothing written.
    Map<String, EventRef> changed = new LinkedHashMap<>();
    changed.put("u-1", taken.get("u-1"));
    long moved = completion(done.name(), "u-2");
    db.exec("UPDATE gt_done SET epoch = 1 WHERE id = " + moved);
    changed.put("u-2", new EventRef(moved, 0));
    assertThat(store.sealTogether(done, changed, false, now)).isFalse();
    assertThat(store.find(List.of("u-1", "u-2"))).isEmpty();
    assertThat(longOf("SELECT COUNT(*) FROM gt_done WHERE time_next >= " + QueueConvention.HELD_NS))
        .isEqualTo(20);
    // Each on its own.
    assertThat(store.seal(done, taken.get("u-1"), "u-1", false, now))
        .isEqualTo(JdbcGroupStore.Sealed.SEALED);
    assertThat(store.seal(done, new EventRef(moved, 0), "u-2", false, now))
        .isEqualTo(JdbcGroupStore.Sealed.CHANGED);
  }

  /** The server's SELECTs so far (every session: this test is alone on its server). */
  static long selects() throws Exception {
    return status("Com_select");
  }

  /** A counter of the server's statements so far ({@code Com_select}, {@code Com_update}...). */
  static long status(String counter) throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE '" + counter + "'")) {
      rs.next();
      return rs.getLong(2);
    }
  }

  /** Seals {@code n} groups of two children each, named {@code prefix-i}; returns their keys. */
  static List<String> sealedGroups(JdbcGroupStore store, QueueTable done, String prefix, long now)
      throws Exception {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      keys.add(prefix + "-" + i);
    }
    seal(store, "gb_kids", done, keys, now);
    return keys;
  }

  /** Two children of each of {@code keys} in {@code kids}, and their groups sealed. */
  static void seal(JdbcGroupStore store, String kids, QueueTable done, List<String> keys, long now)
      throws Exception {
    seal(store, kids, done, keys, now, 2);
  }

  /** {@code n} children of each of {@code keys} in {@code kids}, and their groups sealed. */
  static void seal(
      JdbcGroupStore store, String kids, QueueTable done, List<String> keys, long now, int n)
      throws Exception {
    children(kids, keys, n);
    for (String k : keys) {
      assertThat(store.seal(done, new EventRef(completion(done.name(), k), 0), k, false, now))
          .isEqualTo(JdbcGroupStore.Sealed.SEALED);
    }
  }

  /**
   * The closer completes a pass's groups in one transaction of a fixed number of statements: the
   * shard's tables read once, the groups locked, their children counted, the groups marked and
   * their completion events released, whatever their number (it was a transaction per group, and
   * under a grouped drain completions trailed their last child by over a second). A group whose
   * children are not all done stays sealed.
   */
  @Test
  void aBatchOfCompletionsCostsTheStatementsOfOne() throws Exception {
    table("gb_kids", QueueColumns.GROUP_KEY_DEFINITION);
    QueueTable done = table("gb_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore store = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    List<String> one = sealedGroups(store, done, "one", now);
    List<String> batch = sealedGroups(store, done, "batch", now);
    db.exec("UPDATE gb_kids SET state = 2 WHERE group_key NOT IN ('one-7', 'batch-7')");

    int completedOneByOne = 0;
    for (String k : one.subList(1, one.size())) {
      completedOneByOne += store.complete(k, now) == null ? 0 : 1;
    }
    long selects = selects();
    long updates = status("Com_update");
    assertThat(store.completeAll(List.of(one.get(0)), now, () -> true)).hasSize(1);
    long selectsOfOne = selects() - selects;
    long updatesOfOne = status("Com_update") - updates;
    selects = selects();
    updates = status("Com_update");
    long commits = status("Com_commit");
    List<dev.sluice.db.store.GroupStore.Group> completed =
        store.completeAll(batch, now, () -> true);
    long selectsOfAll = selects() - selects;
    long updatesOfAll = status("Com_update") - updates;

    assertThat(completedOneByOne).as("one by one").isEqualTo(18);
    assertThat(completed)
        .extracting(dev.sluice.db.store.GroupStore.Group::key)
        .hasSize(19)
        .doesNotContain("batch-7");
    assertThat(completed)
        .filteredOn(g -> g.key().equals("batch-3"))
        .singleElement()
        .satisfies(g -> assertThat(g.acked()).isEqualTo(2));
    assertThat(store.find(List.of("batch-3", "batch-7")))
        .extractingFromEntries(e -> e.getValue().state())
        .containsExactlyInAnyOrder("completed", "sealed");
    assertThat(longOf("SELECT COUNT(*) FROM gb_done WHERE time_next < " + QueueConvention.HELD_NS))
        .as("completion events released, exactly the completed groups'")
        .isEqualTo(38);
    assertThat(selectsOfAll).as("selects for 19 of 20 groups, against one").isEqualTo(selectsOfOne);
    assertThat(updatesOfAll)
        .as("updates: the groups marked, their completion events released")
        .isEqualTo(updatesOfOne)
        .isEqualTo(2);
    assertThat(status("Com_commit") - commits).as("one transaction").isEqualTo(1);
    assertThat(store.completeAll(batch, now, () -> true)).as("completed once").isEmpty();
    assertThat(store.completeAll(List.of("batch-7"), now, () -> false)).isEmpty();
  }

  /**
   * A fence that refuses the mark of a batch writes nothing of it: no group completed, no
   * completion event released; the new leader completes them.
   */
  @Test
  void aFencedOffBatchWritesNothing() throws Exception {
    table("gf_kids", QueueColumns.GROUP_KEY_DEFINITION);
    QueueTable done = table("gf_done", QueueColumns.COMPLETES_GROUP_DEFINITION);
    JdbcGroupStore reader = new JdbcGroupStore(ds);
    long now = longOf("SELECT " + QueueConvention.NOW_NS_SQL);
    List<String> keys = List.of("f-1", "f-2", "f-3");
    seal(reader, "gf_kids", done, keys, now);
    db.exec("UPDATE gf_kids SET state = 2");
    db.exec("REPLACE INTO sluice_fence (shard, token, owner) VALUES ('gf', 2, 'new-leader')");
    JdbcGroupStore old = new JdbcGroupStore(ds, new dev.sluice.db.store.Fence("gf", 1, null));

    assertThatThrownBy(() -> old.completeAll(keys, now, () -> true))
        .isInstanceOf(dev.sluice.db.store.FencedOffException.class);
    assertThat(reader.find(keys).values())
        .extracting(dev.sluice.db.store.GroupStore.Group::state)
        .containsOnly("sealed");
    assertThat(longOf("SELECT COUNT(*) FROM gf_done WHERE time_next < " + QueueConvention.HELD_NS))
        .as("no completion event released")
        .isZero();
    JdbcGroupStore leader = new JdbcGroupStore(ds, new dev.sluice.db.store.Fence("gf", 2, null));
    assertThat(leader.completeAll(keys, now, () -> true)).hasSize(3);
    assertThat(longOf("SELECT COUNT(*) FROM gf_done WHERE time_next < " + QueueConvention.HELD_NS))
        .isEqualTo(3);
  }
}
