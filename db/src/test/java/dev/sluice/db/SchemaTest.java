package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.JdbcEventStore;
import dev.sluice.db.store.PollPosition;
import dev.sluice.db.store.TenantRead;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The convention's validator and the poll query's index, on a real server. */
class SchemaTest {
  static TestDatabase db;
  static com.zaxxer.hikari.HikariDataSource ds;
  static QueueCatalog catalog;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(SchemaTest.class);
    ds = DataSources.pool("test", db.url(), db.user(), db.password(), 4);
    catalog = new QueueCatalog(ds);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  @Test
  void aZoneDependentTimeDefaultIsAWarningWithTheFixingAlterAndTheQueueIsStillServed()
      throws Exception {
    String old = "(CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED))";
    db.exec(
        QueueConvention.createTableSql(
                "old_clock_q", List.of("order_id BIGINT NULL"), "sluice_queue ack_wait=5s")
            .replace("(" + QueueConvention.NOW_NS_SQL + ")", old));
    assertThat(catalog.columns("old_clock_q").get("time_next").defaultValue())
        .containsIgnoringCase("unix_timestamp");
    assertThat(catalog.problems("old_clock_q")).isEmpty();
    List<SchemaProblem> warnings = catalog.warnings("old_clock_q");
    assertThat(warnings)
        .extracting(SchemaProblem::column)
        .containsExactly("time_next", "time_created");
    assertThat(warnings.get(0).problem()).contains("time zone");
    for (SchemaProblem w : warnings) {
      db.exec(w.fix());
    }
    assertThat(catalog.warnings("old_clock_q")).isEmpty();
    assertThat(catalog.problems("old_clock_q")).isEmpty();
    db.exec("INSERT INTO old_clock_q (order_id) VALUES (1)");
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT ABS(time_next - " + QueueConvention.NOW_NS_SQL + ") FROM old_clock_q")) {
      rs.next();
      assertThat(rs.getLong(1)).as("the fixed default is now").isLessThan(60_000_000_000L);
    }
  }

  @Test
  void conventionTableIsValidAndPlainInsertWorks() throws Exception {
    db.exec(
        QueueConvention.createTableSql(
            "good_q", List.of("order_id BIGINT NOT NULL"), "sluice_queue ack_wait=5s"));
    QueueCatalog.Discovered d =
        catalog.inspect(new QueueCatalog.Candidate("good_q", "sluice_queue ack_wait=5s"));
    assertThat(d.problem()).isNull();
    assertThat(d.queue().userColumns()).containsExactly("order_id");
    db.exec("INSERT INTO good_q (order_id) VALUES (1)");
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT state, epoch, tenant, priority, time_next, time_created, "
                    + QueueConvention.NOW_NS_SQL
                    + " FROM good_q")) {
      rs.next();
      assertThat(rs.getInt(1)).isZero();
      assertThat(rs.getInt(2)).isZero();
      assertThat(rs.getString(3)).isEmpty();
      assertThat(rs.getInt(4)).isEqualTo(QueueConvention.DEFAULT_PRIORITY);
      long now = rs.getLong(7);
      assertThat(rs.getLong(5)).isBetween(now - 60_000_000_000L, now);
      assertThat(rs.getLong(6)).isEqualTo(rs.getLong(5));
    }
  }

  @Test
  void discoveryFindsOnlyMarkedTables() throws Exception {
    db.exec("CREATE TABLE not_a_queue (id BIGINT PRIMARY KEY) COMMENT='orders'");
    db.exec(QueueConvention.createTableSql("found_q", List.of(), "sluice_queue"));
    assertThat(catalog.candidates())
        .extracting(QueueCatalog.Candidate::table)
        .contains("found_q")
        .doesNotContain("not_a_queue");
  }

  @Test
  void validatorNamesEachProblemWithItsFix() throws Exception {
    db.exec(
        "CREATE TABLE bad_q (id BIGINT NOT NULL PRIMARY KEY, time_next BIGINT NULL,"
            + " state VARCHAR(10) NOT NULL DEFAULT 'x', tenant VARCHAR(64) NOT NULL,"
            + " time_created BIGINT NOT NULL DEFAULT 0) COMMENT='sluice_queue'");
    List<SchemaProblem> p = catalog.problems("bad_q");
    assertThat(p)
        .extracting(SchemaProblem::column)
        .contains(
            "time_next",
            "state",
            "epoch",
            "priority",
            "tenant",
            "time_acked",
            QueueConvention.POLL_INDEX);
    assertThat(p)
        .filteredOn(x -> x.column().equals("epoch"))
        .first()
        .satisfies(
            x -> {
              assertThat(x.problem()).isEqualTo("missing column");
              assertThat(x.fix())
                  .isEqualTo("ALTER TABLE `bad_q` ADD COLUMN `epoch` INT NOT NULL DEFAULT 0");
            });
    assertThat(p)
        .filteredOn(x -> x.column().equals("time_next"))
        .first()
        .satisfies(x -> assertThat(x.problem()).contains("NOT NULL"));
    assertThat(p)
        .filteredOn(x -> x.column().equals("tenant"))
        .first()
        .satisfies(x -> assertThat(x.problem()).contains("missing default"));
    assertThat(p)
        .filteredOn(x -> x.column().equals(QueueConvention.POLL_INDEX))
        .first()
        .satisfies(
            x -> assertThat(x.fix()).contains("ADD INDEX `sluice_poll` (`state`, `time_next`)"));
    // Applying every fix makes the table valid.
    for (SchemaProblem x : p) {
      if (!x.column().equals("state")) {
        db.exec(x.fix());
      }
    }
    db.exec("ALTER TABLE bad_q MODIFY `state` TINYINT NOT NULL DEFAULT 0");
    assertThat(catalog.problems("bad_q")).isEmpty();
  }

  @Test
  void enumStateColumnIsAccepted() throws Exception {
    db.exec(QueueConvention.createTableSql("enum_q", List.of(), "sluice_queue"));
    db.exec(
        "ALTER TABLE enum_q MODIFY `state` ENUM('pending','fired','acked','dead','cancelled') NOT NULL DEFAULT 'pending'");
    QueueCatalog.Discovered d =
        catalog.inspect(new QueueCatalog.Candidate("enum_q", "sluice_queue"));
    assertThat(d.problem()).isNull();
    assertThat(d.queue().stateIsEnum()).isTrue();
  }

  @Test
  void pollQueryIsServedByTheIndexAtAnyBacklog() throws Exception {
    db.exec(QueueConvention.createTableSql("explain_q", List.of("n INT NULL"), "sluice_queue"));
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      StringBuilder sb = new StringBuilder("INSERT INTO explain_q (n, state, time_next) VALUES ");
      for (int i = 0; i < 5000; i++) {
        sb.append(i == 0 ? "" : ",")
            .append("(")
            .append(i)
            .append(",")
            .append(i % 3 == 0 ? 0 : 2)
            .append(",")
            .append(1_000_000L * i)
            .append(")");
      }
      s.execute(sb.toString());
      s.execute("ANALYZE TABLE explain_q");
    }
    QueueTable q = catalog.inspect(new QueueCatalog.Candidate("explain_q", "sluice_queue")).queue();
    JdbcEventStore store = new JdbcEventStore(ds, q);
    List<Map<String, String>> plan = explain(ds, store.pollSql(Long.MAX_VALUE, 1000));
    assertThat(plan).hasSize(1);
    assertThat(plan.get(0).get("key")).isEqualTo(QueueConvention.POLL_INDEX);
    assertThat(plan.get(0).get("type")).isNotEqualTo("ALL");
    assertThat(plan.get(0).get("Extra")).doesNotContain("filesort");
    List<Map<String, String>> next =
        explain(ds, store.pollAfterSql(Long.MAX_VALUE, 1_000_000L * 3000, 3001, 100));
    assertThat(next.get(0).get("key")).isEqualTo(QueueConvention.POLL_INDEX);
    assertThat(next.get(0).get("type")).isEqualTo("range");
    assertThat(next.get(0).get("Extra")).doesNotContain("filesort");
  }

  @Test
  void pollsNameTheIndexesTheTableHasWhateverTheirNames() throws Exception {
    db.exec(
        QueueConvention.createTableSql("renamed_q", List.of(), "sluice_queue")
            .replace("`" + QueueConvention.POLL_INDEX + "`", "`by_due`")
            .replace("`" + QueueConvention.TENANT_INDEX + "`", "`by_tenant_due`"));
    db.exec("INSERT INTO renamed_q (tenant, time_next) VALUES ('a', 1), ('b', 2), ('a', 3)");
    QueueTable q = catalog.inspect(new QueueCatalog.Candidate("renamed_q", "sluice_queue")).queue();
    assertThat(q.pollIndex()).isEqualTo("by_due");
    assertThat(q.tenantIndex()).isEqualTo("by_tenant_due");
    JdbcEventStore store = new JdbcEventStore(ds, q);
    assertThat(store.pollPending(Long.MAX_VALUE, 10))
        .extracting(EventRow::timeNextNs)
        .containsExactly(1L, 2L, 3L);
    assertThat(explain(ds, store.pollSql(Long.MAX_VALUE, 10)).get(0).get("key"))
        .isEqualTo("by_due");
    assertThat(store.pollTenants(List.of(new TenantRead("a", 5, null)), Long.MAX_VALUE))
        .extracting(EventRow::timeNextNs)
        .containsExactly(1L, 3L);
    assertEachPartOnTheTenantIndex(
        store.pollTenantsSql(List.of(new TenantRead("a", 5, null)), Long.MAX_VALUE),
        1,
        "by_tenant_due");

    db.exec("ALTER TABLE renamed_q DROP INDEX by_tenant_due");
    QueueTable without =
        catalog.inspect(new QueueCatalog.Candidate("renamed_q", "sluice_queue")).queue();
    assertThat(without.hasTenantIndex()).isFalse();
    assertThat(
            new JdbcEventStore(ds, without)
                .pollTenants(List.of(new TenantRead("b", 5, null)), Long.MAX_VALUE))
        .extracting(EventRow::timeNextNs)
        .containsExactly(2L);
  }

  @Test
  void severalTenantsAreReadInOneStatementEachPartOnTheTenantIndex() throws Exception {
    db.exec(QueueConvention.createTableSql("tenants_q", List.of(), "sluice_queue"));
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      StringBuilder sb = new StringBuilder("INSERT INTO tenants_q (tenant, time_next) VALUES ");
      for (int i = 0; i < 3000; i++) {
        String tenant = i < 2900 ? "noisy" : "quiet-" + (i % 3);
        sb.append(i == 0 ? "" : ",").append("('").append(tenant).append("',").append(i).append(")");
      }
      s.execute(sb.toString());
      s.execute("ANALYZE TABLE tenants_q");
    }
    QueueTable q = catalog.inspect(new QueueCatalog.Candidate("tenants_q", "sluice_queue")).queue();
    JdbcEventStore store = new JdbcEventStore(ds, q);
    List<TenantRead> limits =
        List.of(
            new TenantRead("noisy", 5, null),
            new TenantRead("quiet-0", 100, null),
            new TenantRead("quiet-1", 2, null),
            new TenantRead("absent", 10, null));
    List<dev.sluice.db.store.EventRow> rows = store.pollTenants(limits, Long.MAX_VALUE);
    Map<String, Long> byTenant =
        rows.stream()
            .collect(
                java.util.stream.Collectors.groupingBy(
                    dev.sluice.db.store.EventRow::tenant, java.util.stream.Collectors.counting()));
    assertThat(byTenant)
        .containsOnly(Map.entry("noisy", 5L), Map.entry("quiet-0", 33L), Map.entry("quiet-1", 2L));
    // Each tenant's oldest first.
    assertThat(rows.subList(0, 5))
        .extracting(r -> r.timeNextNs())
        .containsExactly(0L, 1L, 2L, 3L, 4L);
    assertEachPartOnTheTenantIndex(store.pollTenantsSql(limits, Long.MAX_VALUE), 4);
  }

  @Test
  void aTenantReadAfterAPositionReadsOnlyTheRowsPastItOnTheTenantIndex() throws Exception {
    db.exec(QueueConvention.createTableSql("tenants_after_q", List.of(), "sluice_queue"));
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      StringBuilder sb =
          new StringBuilder("INSERT INTO tenants_after_q (id, tenant, time_next) VALUES ");
      for (int i = 1; i <= 3000; i++) {
        String tenant = i <= 2900 ? "noisy" : "quiet";
        // Pairs of rows share a time_next, so the position's id decides within a pair.
        sb.append(i == 1 ? "" : ",")
            .append("(")
            .append(i)
            .append(",'")
            .append(tenant)
            .append("',")
            .append(i / 2)
            .append(")");
      }
      s.execute(sb.toString());
      s.execute("ANALYZE TABLE tenants_after_q");
    }
    QueueTable q =
        catalog.inspect(new QueueCatalog.Candidate("tenants_after_q", "sluice_queue")).queue();
    JdbcEventStore store = new JdbcEventStore(ds, q);
    // Row 1000 has time_next 500, as has row 1001: reading after row 1000 starts at row 1001.
    List<TenantRead> reads =
        List.of(
            new TenantRead("noisy", 4, new PollPosition(500, 1000)),
            new TenantRead("quiet", 3, null),
            new TenantRead("noisy-2", 3, new PollPosition(0, 0)));
    List<EventRow> rows = store.pollTenants(reads, Long.MAX_VALUE);
    assertThat(rows.stream().filter(r -> r.tenant().equals("noisy")))
        .extracting(EventRow::id)
        .containsExactly(1001L, 1002L, 1003L, 1004L);
    assertThat(rows.stream().filter(r -> r.tenant().equals("quiet")))
        .extracting(EventRow::id)
        .containsExactly(2901L, 2902L, 2903L);
    // Just before a row: reading after it includes that row.
    assertThat(
            store.pollTenants(
                List.of(new TenantRead("noisy", 1, PollPosition.before(500, 1000))),
                Long.MAX_VALUE))
        .extracting(EventRow::id)
        .containsExactly(1000L);
    assertEachPartOnTheTenantIndex(store.pollTenantsSql(reads, Long.MAX_VALUE), 3);
  }

  @Test
  void tenantsWithPendingEventsAreListedByOneLooseIndexScan() throws Exception {
    db.exec(QueueConvention.createTableSql("tenants_list_q", List.of(), "sluice_queue"));
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      // A 6,000-row backlog of one tenant, 30 rows each of three others, done rows of a fifth.
      StringBuilder sb =
          new StringBuilder("INSERT INTO tenants_list_q (tenant, state, time_next) VALUES ");
      for (int i = 0; i < 6090; i++) {
        String tenant = i < 6000 ? "noisy" : List.of("a", "b", "c").get(i % 3);
        sb.append(i == 0 ? "" : ",")
            .append("('")
            .append(tenant)
            .append("',0,")
            .append(1000L + i)
            .append(")");
      }
      sb.append(",('done',2,5)");
      s.execute(sb.toString());
      s.execute("ANALYZE TABLE tenants_list_q");
    }
    QueueTable q =
        catalog.inspect(new QueueCatalog.Candidate("tenants_list_q", "sluice_queue")).queue();
    JdbcEventStore store = new JdbcEventStore(ds, q);
    assertThat(store.pendingTenants(1000))
        .containsExactly(
            new EventStore.TenantDue("a", 1000L + 6000),
            new EventStore.TenantDue("b", 1000L + 6001),
            new EventStore.TenantDue("c", 1000L + 6002),
            new EventStore.TenantDue("noisy", 1000L));
    assertThat(store.pendingTenants(2))
        .extracting(EventStore.TenantDue::tenant)
        .containsExactly("a", "b");
    // One seek per tenant however deep a backlog: not a scan of the noisy tenant's rows.
    List<Map<String, String>> plan = explain(ds, store.pendingTenantsSql(1000));
    assertThat(plan).hasSize(1);
    assertThat(plan.get(0).get("key")).isEqualTo(QueueConvention.TENANT_INDEX);
    assertThat(plan.get(0).get("Extra")).contains("Using index for group-by");
    // The next page of a listing is the same loose scan, from where the last one stopped.
    assertThat(store.pendingTenantsAfter("a", 1000))
        .extracting(EventStore.TenantDue::tenant)
        .startsWith("b")
        .doesNotContain("a");
    List<Map<String, String>> next = explain(ds, store.pendingTenantsAfterSql("a", 1000));
    assertThat(next.get(0).get("key")).isEqualTo(QueueConvention.TENANT_INDEX);
    assertThat(next.get(0).get("Extra")).contains("Using index for group-by");
  }

  /** Every part of a per-tenant poll is a range on the tenant index, with no sort. */
  private static void assertEachPartOnTheTenantIndex(String sql, int parts) throws Exception {
    assertEachPartOnTheTenantIndex(sql, parts, QueueConvention.TENANT_INDEX);
  }

  private static void assertEachPartOnTheTenantIndex(String sql, int parts, String index)
      throws Exception {
    List<Map<String, String>> plan = explain(ds, sql);
    for (Map<String, String> part : plan) {
      if (part.get("table") == null || part.get("table").startsWith("<union")) {
        continue; // the union's own result row
      }
      assertThat(part.get("key")).as(part.toString()).isEqualTo(index);
      assertThat(part.get("type")).as(part.toString()).isIn("range", "ref");
      assertThat(part.get("Extra")).as(part.toString()).doesNotContain("filesort");
    }
    assertThat(plan.stream().filter(p -> index.equals(p.get("key")))).hasSize(parts);
  }

  static List<Map<String, String>> explain(DataSource ds, String sql) throws Exception {
    List<Map<String, String>> rows = new ArrayList<>();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("EXPLAIN " + sql)) {
      while (rs.next()) {
        Map<String, String> row = new java.util.HashMap<>();
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
          row.put(rs.getMetaData().getColumnLabel(i), String.valueOf(rs.getString(i)));
        }
        rows.add(row);
      }
    }
    return rows;
  }
}
