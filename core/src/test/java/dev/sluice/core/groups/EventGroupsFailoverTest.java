package dev.sluice.core.groups;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.AckSql;
import dev.sluice.client.QueueColumns;
import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.GroupOutcome;
import dev.sluice.db.KeyRange;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.EventRef;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Event groups across a change of leader: the leader loses the shard after the last child's ack
 * committed and before it completed the group; the next leader completes it, and the completion
 * event is delivered once in all.
 */
class EventGroupsFailoverTest {
  static TestDatabase db;

  @BeforeAll
  static void start() {
    db = TestDatabases.fresh(EventGroupsFailoverTest.class);
  }

  @AfterAll
  static void stop() {}

  /** A manager on the test's database (the shard pool, discovery and renewal of the original). */
  static EngineHarness.Builder manager(String managerId) {
    return EngineHarness.on(db)
        .managerId(managerId)
        .poolSize(6)
        .discoveryInterval(Duration.ofMillis(300))
        .leaseRenew(Duration.ofMillis(200));
  }

  static long longOf(String query) throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      return rs.next() ? rs.getLong(1) : -1;
    }
  }

  @Test
  void aLeaderLostAfterTheLastAckLeavesTheCompletionToTheNextOneOnce() throws Exception {
    db.exec(
        QueueConvention.createTableSql(
            "f_kids",
            List.of(
                "`n` INT NULL",
                QueueColumns.GROUP_KEY_DEFINITION,
                QueueColumns.GROUP_INDEX_DEFINITION),
            "sluice_queue ack_wait=60s"));
    db.exec(
        QueueConvention.createTableSql(
            "f_done",
            List.of("`n` INT NULL", QueueColumns.COMPLETES_GROUP_DEFINITION),
            "sluice_queue"));
    CollectingOutlet kidsA = new CollectingOutlet(1000);
    CollectingOutlet doneA = new CollectingOutlet(1000);
    CollectingOutlet doneB = new CollectingOutlet(1000);
    EngineHarness ha = manager("groups-a").start();
    EngineHarness hb = null;
    QueueEngine a = ha.engine();
    try {
      await()
          .atMost(20, SECONDS)
          .until(() -> a.find("f_kids").isPresent() && a.find("f_done").isPresent());
      a.subscribe(kidsA, "f_kids", KeyRange.ALL);
      a.subscribe(doneA, "f_done", KeyRange.ALL);
      long completionId;
      try (Connection c = db.connect()) {
        c.setAutoCommit(false);
        try (PreparedStatement ps =
            c.prepareStatement("INSERT INTO f_kids (n, group_key) VALUES (?, 'g')")) {
          for (int i = 0; i < 5; i++) {
            ps.setInt(1, i);
            ps.executeUpdate();
          }
        }
        try (PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO f_done (n, completes_group) VALUES (0, 'g')",
                Statement.RETURN_GENERATED_KEYS)) {
          ps.executeUpdate();
          try (ResultSet rs = ps.getGeneratedKeys()) {
            rs.next();
            completionId = rs.getLong(1);
          }
        }
        c.commit();
      }
      List<Delivery> kids = new ArrayList<>();
      long end = System.nanoTime() + SECONDS.toNanos(20);
      while (kids.size() < 5 && System.nanoTime() < end) {
        Delivery d = kidsA.next(200);
        if (d != null) {
          kids.add(d);
        }
      }
      assertThat(kids).hasSize(5);
      await().atMost(10, SECONDS).until(() -> longOf("SELECT COUNT(*) FROM sluice_group") == 1);
      for (Delivery d : kids.subList(0, 4)) {
        a.outcomes("f_kids", "s1").acked(kidsA, List.of(new EventRef(d.id(), d.epoch())));
      }
      await()
          .atMost(10, SECONDS)
          .until(() -> longOf("SELECT COUNT(*) FROM f_kids WHERE state = 2") == 4);

      // The lease is taken from under the leader (as when it is killed): it stops at once.
      db.exec(
          "UPDATE sluice_lease l JOIN sluice_fence f ON f.shard = l.shard"
              + " SET l.owner = 'thief', l.token = l.token + 1, f.owner = 'thief',"
              + " f.token = l.token, l.expires_ns = l.expires_ns + 3600000000000"
              + " WHERE l.shard = 's1'");
      await().atMost(10, SECONDS).until(() -> !a.shards().get(0).leading());
      // The last child's ack commits after that: no manager is told of it.
      Delivery last = kids.get(4);
      db.exec(
          "UPDATE f_kids SET "
              + AckSql.set("2", QueueColumns.NOW_NS_SQL)
              + " WHERE id = "
              + last.id()
              + " AND state = 1 AND epoch = "
              + last.epoch());
      assertThat(longOf("SELECT COUNT(*) FROM sluice_group WHERE state = 'sealed'")).isEqualTo(1);
      assertThat(doneA.got).isEmpty();

      // The thief goes; another manager takes the shard and completes the group.
      a.stop();
      hb = manager("groups-b").follower().start();
      QueueEngine b = hb.engine();
      b.subscribe(doneB, "f_done", KeyRange.ALL);
      db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1' AND owner = 'thief'");
      b.lead();
      Delivery d = doneB.next(30_000);
      assertThat(d).isNotNull();
      assertThat(d.id()).isEqualTo(completionId);
      assertThat(d.group()).isEqualTo(new GroupOutcome("g", 5, 0, 0));
      b.outcomes("f_done", "s1").acked(doneB, List.of(new EventRef(d.id(), d.epoch())));
      await()
          .atMost(10, SECONDS)
          .until(() -> longOf("SELECT state FROM f_done WHERE id = " + completionId) == 2);
      assertThat(doneA.got).isEmpty();
      assertThat(doneB.next(300)).isNull();
    } finally {
      ha.close();
      if (hb != null) {
        hb.close();
      }
    }
  }
}
