package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.DataSources;
import dev.sluice.db.store.JdbcLeaseStore;
import dev.sluice.proto.v1.Event;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A leader loses its lease for a moment (a database restart that outlasts the lease, a pause) and
 * takes it back while its receivers stay connected on the same streams. The queue it abandoned
 * stops at once and leaves the events its receivers hold fired, for them to ack; but the credits
 * those events took on each stream must come back, or the receiver, full of credits that no queue
 * will ever give back, gets nothing more.
 */
class LeaseRetakenTest {
  @Test
  void aReceiverKeepsGettingEventsAfterItsLeaderLostAndRetookTheShard() throws Exception {
    try (Harness h = new Harness(LeaseRetakenTest.class)) {
      h.createQueue("retake_q", "poll_interval=50ms ack_wait=60s");
      h.startManager(
          h.configBuilder()
              .leaseTtl(Duration.ofSeconds(3))
              .leaseRenew(Duration.ofMillis(300))
              .build(),
          Clock.systemUTC());
      ShardManager shard = h.server().engine().shards().get(0);
      await().atMost(10, SECONDS).until(shard::leading);

      RawReceiver r = h.rawReceiver("retake_q", "r", 2);
      h.exec("INSERT INTO retake_q (order_id) VALUES (1), (2)");
      Event first = r.events.poll(20, SECONDS);
      Event second = r.events.poll(20, SECONDS);
      assertThat(first).isNotNull();
      assertThat(second).as("both credits used").isNotNull();

      // Another manager holds s1 for a second, then lets it lapse: ours stops leading, then
      // leads again, on the same receiver stream.
      h.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1'");
      try (HikariDataSource ds =
          DataSources.pool("intruder", h.url(), h.db.user(), h.db.password(), 1)) {
        assertThat(
                new JdbcLeaseStore(ds)
                    .acquire("s1", "intruder", Duration.ofSeconds(1).toNanos())
                    .held())
            .isTrue();
      }
      await().atMost(10, SECONDS).until(() -> !shard.leading());
      await().atMost(20, SECONDS).until(shard::leading);

      // What the abandoned queue sent is acked through the new one, by the CAS.
      r.ack(first);
      r.ack(second);
      await()
          .atMost(10, SECONDS)
          .until(() -> h.queryLong("SELECT COUNT(*) FROM retake_q WHERE state = 2") == 2);

      h.exec("INSERT INTO retake_q (order_id) VALUES (3), (4)");
      await()
          .atMost(20, SECONDS)
          .untilAsserted(
              () ->
                  assertThat(r.all)
                      .as("events after the lease came back (the stream's credits were given back)")
                      .hasSize(4));
    }
  }
}
