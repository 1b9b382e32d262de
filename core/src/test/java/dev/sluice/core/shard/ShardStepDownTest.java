package dev.sluice.core.shard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.EngineHarness;
import dev.sluice.db.QueueConvention;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A shard whose queues are slow to stop (each poller is stuck in the database: its table is locked
 * by another session) steps down when its lease is taken: every queue stops dispatching at once,
 * not one after another, and the shard's lock is not held while the stuck threads are waited for.
 * Nor does a step-down wait for a discovery round stuck in the database.
 */
class ShardStepDownTest {
  static final int QUEUES = 4;

  @Test
  void aShardWithStuckQueuesStopsThemAllAtOnceAndKeepsItsLockFree() throws Exception {
    TestDatabase db = TestDatabases.fresh(ShardStepDownTest.class);
    List<String> names = new ArrayList<>();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (int i = 0; i < QUEUES; i++) {
        names.add("stuck_" + i);
        s.execute(
            QueueConvention.createTableSql(
                "stuck_" + i,
                List.of("`note` VARCHAR(16) NULL"),
                "sluice_queue poll_interval=50ms"));
      }
    }
    try (EngineHarness harness =
        EngineHarness.on(db)
            .managerId("stepdown-test")
            .poolSize(12)
            .discoveryInterval(Duration.ofMillis(300))
            .leaseTtl(Duration.ofSeconds(10))
            .leaseRenew(Duration.ofMillis(200))
            .start()) {
      ShardManager shard = harness.shard();
      await().atMost(10, SECONDS).until(() -> shard.leading() && shard.queues().size() == QUEUES);
      try (Connection lock = db.connect();
          Statement s = lock.createStatement()) {
        s.execute(
            "LOCK TABLES "
                + String.join(", ", names.stream().map(n -> "`" + n + "` WRITE").toList()));
        try {
          // Every poller waits on its table now (with the binlog followed and nothing new, a
          // poller's next read is its safety poll, within 5 s).
          await().atMost(15, SECONDS).until(() -> waitingOnTables(db) >= QUEUES);
          // Another manager takes the lease: the next renewal (every 200 ms) finds it gone.
          try (Connection c = db.connect();
              Statement t = c.createStatement()) {
            t.execute(
                "UPDATE sluice_lease SET owner = 'thief', token = token + 1,"
                    + " expires_ns = expires_ns + 3600000000000 WHERE shard = 's1'");
          }
          await().atMost(5, SECONDS).until(() -> !shard.leading());
          // A discovery round takes the shard's lock: it is not held across the step-down's wait.
          CompletableFuture<Void> round = CompletableFuture.runAsync(shard::discover);
          // Each stuck queue's threads are waited for at most 2 s; one after another, the last
          // queue's dispatcher would still run 6 s from now.
          await().atMost(4, SECONDS).until(() -> dispatchers() == 0 && shard.queues().isEmpty());
          await().atMost(1, SECONDS).until(round::isDone);
          assertThat(waitingOnTables(db)).as("the pollers are still stuck").isGreaterThan(0);
        } finally {
          s.execute("UNLOCK TABLES");
        }
      }
    }
  }

  /**
   * A discovery stuck in the database (here: waiting on a table lock to read the pause switches)
   * must not hold up a step-down, which takes the shard's lock.
   */
  @Test
  void stopLeadingDoesNotWaitForADiscoveryBlockedInTheDatabase() throws Exception {
    try (EngineHarness h = EngineHarness.fresh(ShardStepDownTest.class).start()) {
      h.queue("disc_q", List.of(), "sluice_queue");
      ShardManager shard = h.shard();
      await().atMost(10, SECONDS).until(() -> shard.leading() && shard.queue("disc_q") != null);
      CompletableFuture<Void> down;
      try (Connection lock = h.db().connect();
          Statement s = lock.createStatement()) {
        s.execute("LOCK TABLES sluice_queue_control WRITE");
        try {
          // The next discovery round (every 200 ms) waits on that lock.
          await()
              .atMost(5, SECONDS)
              .until(
                  () ->
                      h.queryLong(
                              "SELECT COUNT(*) FROM information_schema.processlist WHERE db = ?"
                                  + " AND info LIKE '%sluice_queue_control%' AND state LIKE"
                                  + " 'Waiting for table%'",
                              h.db().name())
                          > 0);
          down = CompletableFuture.runAsync(() -> shard.stopLeading("test: step-down"));
          await().atMost(5, SECONDS).until(down::isDone);
          assertThat(shard.leading()).isFalse();
          assertThat(shard.queues()).isEmpty();
        } finally {
          s.execute("UNLOCK TABLES");
        }
      }
      down.join();
      // The discovery that was waiting finishes without serving anything for a shard not led.
      await()
          .during(Duration.ofMillis(700))
          .atMost(3, SECONDS)
          .until(() -> shard.queues().isEmpty());
    }
  }

  /** Live dispatcher threads of this test's queues. */
  static int dispatchers() {
    return (int)
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("sluice-s1-stuck_"))
            .filter(t -> t.getName().endsWith("-dispatcher"))
            .filter(Thread::isAlive)
            .count();
  }

  static long waitingOnTables(TestDatabase db) throws Exception {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT COUNT(*) FROM information_schema.processlist WHERE db = ?"
                    + " AND info LIKE '%stuck\\_%' AND state LIKE 'Waiting for table%'")) {
      ps.setString(1, db.name());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
