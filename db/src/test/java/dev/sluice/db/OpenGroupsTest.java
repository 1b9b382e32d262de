package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.db.store.GroupStore;
import dev.sluice.db.store.Stores;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the status page shows of a shard's open event groups ({@link GroupStore#openGroups}): none
 * before the shard is migrated, then how many are sealed and the oldest few, oldest first, with
 * their age on the database clock. Completed groups are not open.
 */
class OpenGroupsTest {
  static TestDatabase db;
  static HikariDataSource ds;

  @BeforeAll
  static void setUp() {
    db = TestDatabases.fresh(OpenGroupsTest.class);
    ds = DataSources.pool("open-groups", db.url(), db.user(), db.password(), 2);
  }

  @AfterAll
  static void tearDown() {
    ds.close();
  }

  @Test
  void aShardWithoutTheTableHasNoOpenGroupsThenTheOldestAreListedWithTheCount() throws Exception {
    GroupStore groups = Stores.over(ds).groups();
    assertThat(groups.openGroups(5)).isEqualTo(new GroupStore.OpenGroups(0, java.util.List.of()));

    SluiceMigrations.migrateSluice(ds);
    long now = groups.nowNs();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      for (int i = 0; i < 4; i++) {
        s.execute(
            "INSERT INTO sluice_group (group_key, state, completion_queue, completion_id,"
                + " completion_epoch, sealed_ns) VALUES ('g"
                + i
                + "', 'sealed', 'orders', "
                + (100 + i)
                + ", 0, "
                + (now - (10 - i) * 60_000_000_000L)
                + ")");
      }
      s.execute(
          "INSERT INTO sluice_group (group_key, state, completion_queue, completion_id,"
              + " completion_epoch, sealed_ns, completed_ns) VALUES ('done', 'completed', 'orders',"
              + " 99, 0, "
              + (now - 3_600_000_000_000L)
              + ", "
              + now
              + ")");
    }

    GroupStore.OpenGroups open = groups.openGroups(2);
    assertThat(open.open()).as("every sealed group is counted, not only those listed").isEqualTo(4);
    assertThat(open.oldest())
        .extracting(GroupStore.OpenGroup::key, GroupStore.OpenGroup::completionId)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("g0", 100L),
            org.assertj.core.groups.Tuple.tuple("g1", 101L));
    assertThat(open.oldest().get(0).ageMs()).isBetween(600_000L, 660_000L);
    assertThat(groups.openCount()).isEqualTo(4);
  }
}
