package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.DataSources;
import dev.sluice.db.store.JdbcLeaseStore;
import dev.sluice.proto.v1.Event;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A leader whose lease was taken over behind its back (a long pause, a partition: it has not
 * renewed yet, so it still believes it leads) must not change the shard's events any more: every
 * write it makes is fenced by the lease token, and the first write refused stops the shard. A
 * receiver's ack it had queued is not its own write: that goes through unfenced once it stopped.
 */
class FencingTest {
  /**
   * Starts the harness's manager with renewals so rare that its lease keeper cannot notice a
   * takeover during the test, and waits until it leads shard s1.
   */
  private static ShardManager startUnawareLeader(Harness h) {
    h.startManager(
        h.configBuilder()
            .leaseTtl(Duration.ofSeconds(60))
            .leaseRenew(Duration.ofSeconds(20))
            .build(),
        Clock.systemUTC());
    ShardManager shard = h.server().engine().shards().get(0);
    await().atMost(10, SECONDS).until(shard::leading);
    return shard;
  }

  /**
   * The lease of s1 lapses (as the database's clock sees it) and "intruder" takes it through the
   * real lease store, which moves the fence.
   */
  private static void takeOver(Harness h) throws Exception {
    h.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1'");
    try (HikariDataSource ds =
        DataSources.pool("intruder", h.url(), h.db.user(), h.db.password(), 1)) {
      assertThat(
              new JdbcLeaseStore(ds)
                  .acquire("s1", "intruder", Duration.ofHours(1).toNanos())
                  .held())
          .isTrue();
    }
  }

  @Test
  void aDeposedLeaderCanNeitherAckNorFireAndStopsLeadingAtOnce() throws Exception {
    try (Harness h = new Harness(FencingTest.class)) {
      h.createQueue("fence_q", "poll_interval=50ms ack_wait=60s");
      ShardManager shard = startUnawareLeader(h);
      RawReceiver r = h.rawReceiver("fence_q", "r", 100);
      h.exec("INSERT INTO fence_q (order_id) VALUES (1)");
      Event held = r.events.poll(20, SECONDS);
      assertThat(held).isNotNull();

      takeOver(h);
      assertThat(shard.leading()).as("the old leader has not noticed").isTrue();

      // Reaches the old leader's ack writer: refused under its lease, which stops the shard; then
      // written unfenced, as a receiver's answer (a CAS on its epoch) is wherever it lands.
      r.ack(held);
      await().atMost(5, SECONDS).until(() -> !shard.leading());
      await()
          .atMost(5, SECONDS)
          .until(() -> h.queryLong("SELECT state FROM fence_q WHERE id = ?", held.getId()) == 2);
      assertThat(shard.faultReason()).contains("fenced off").contains("token");
      assertThat(h.server().engine().faults()).containsKey("s1");

      h.exec("INSERT INTO fence_q (order_id) VALUES (2)");
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(3))
          .until(
              () ->
                  h.queryLong(
                          "SELECT COUNT(*) FROM fence_q WHERE order_id = 2 AND state = 0 AND"
                              + " epoch = 0")
                      == 1);
      assertThat(r.all).as("nothing more was delivered").hasSize(1);

      // At its next round the lease keeper finds the shard served by the intruder: this process
      // is a healthy standby again, not a manager that is unready for good.
      shard.servedElsewhere("intruder");
      assertThat(h.server().engine().faults()).doesNotContainKey("s1");
      assertThat(h.server().ready()).isTrue();
    }
  }

  /**
   * The same leader writing a fire while another manager takes the shard: the fire refused is never
   * applied, the event stays pending for the new leader.
   */
  @Test
  void aDeposedLeaderCannotFire() throws Exception {
    try (Harness h = new Harness(FencingTest.class)) {
      h.createQueue("fence_f", "poll_interval=50ms");
      ShardManager shard = startUnawareLeader(h);
      RawReceiver r = h.rawReceiver("fence_f", "r", 100);
      await().atMost(5, SECONDS).until(() -> r.subscribed);
      takeOver(h);
      h.exec("INSERT INTO fence_f (order_id) VALUES (1)");
      await().atMost(5, SECONDS).until(() -> !shard.leading());
      assertThat(shard.faultReason()).contains("fenced off");
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(2))
          .until(
              () -> h.queryLong("SELECT COUNT(*) FROM fence_f WHERE state = 0 AND epoch = 0") == 1);
      assertThat(r.all).isEmpty();
    }
  }

  /**
   * A discovery stuck in the database (here: waiting on a table lock to read the pause switches)
   * must not hold up a step-down, which takes the shard manager's lock.
   */
  @Test
  void stopLeadingDoesNotWaitForADiscoveryBlockedInTheDatabase() throws Exception {
    try (Harness h = new Harness(FencingTest.class)) {
      h.createQueue("disc_q", "");
      h.startManager();
      ShardManager shard = h.server().engine().shards().get(0);
      await().atMost(10, SECONDS).until(() -> shard.leading() && shard.queue("disc_q") != null);
      CompletableFuture<Void> down;
      try (Connection lock = h.connect();
          Statement s = lock.createStatement()) {
        s.execute("LOCK TABLES sluice_queue_control WRITE");
        try {
          // The next discovery round (every 300 ms) waits on that lock.
          await()
              .atMost(5, SECONDS)
              .until(
                  () ->
                      h.queryLong(
                              "SELECT COUNT(*) FROM information_schema.processlist WHERE db = ?"
                                  + " AND info LIKE '%sluice_queue_control%' AND state LIKE"
                                  + " 'Waiting for table%'",
                              h.db.name())
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
}
