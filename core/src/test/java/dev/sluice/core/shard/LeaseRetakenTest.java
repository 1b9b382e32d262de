package dev.sluice.core.shard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A leader loses its lease for a moment (a database restart that outlasts the lease, a pause) and
 * takes it back while its outlets stay subscribed (a receiver's stream stays open). The queue it
 * abandoned stops at once and leaves the events its outlets hold fired, for them to ack; but the
 * credits those events took on each outlet must come back, or the outlet, full of credits that no
 * queue will ever give back, gets nothing more.
 */
class LeaseRetakenTest {
  @Test
  void anOutletKeepsGettingEventsAfterItsLeaderLostAndRetookTheShard() throws Exception {
    try (EngineHarness h =
        EngineHarness.fresh(LeaseRetakenTest.class)
            .leaseTtl(Duration.ofSeconds(3))
            .leaseRenew(Duration.ofMillis(300))
            .start()) {
      h.queue(
          "retake_q",
          List.of("`order_id` BIGINT NULL"),
          "sluice_queue poll_interval=50ms ack_wait=60s");
      ShardManager shard = h.shard();
      await().atMost(10, SECONDS).until(shard::leading);

      CollectingOutlet out = h.subscribe("retake_q", 2);
      h.db().exec("INSERT INTO retake_q (order_id) VALUES (1), (2)");
      Delivery first = out.next(20_000);
      Delivery second = out.next(20_000);
      assertThat(first).isNotNull();
      assertThat(second).as("both credits used").isNotNull();

      // Another manager holds s1 until ours has stopped leading, then its lease lapses: ours
      // leads again, with the same outlet subscribed.
      h.leaseTakenBy("intruder", Duration.ofHours(1));
      await().atMost(10, SECONDS).until(() -> !shard.leading());
      h.db().exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1'");
      await().atMost(20, SECONDS).until(shard::leading);

      // What the abandoned queue sent is acked through the new one, by the CAS.
      h.ack("retake_q", out, first);
      h.ack("retake_q", out, second);
      await()
          .atMost(10, SECONDS)
          .until(() -> h.queryLong("SELECT COUNT(*) FROM retake_q WHERE state = 2") == 2);

      h.db().exec("INSERT INTO retake_q (order_id) VALUES (3), (4)");
      assertThat(out.take(2, 20_000))
          .as("events after the lease came back (the outlet's credits were given back)")
          .hasSize(2);
    }
  }
}
