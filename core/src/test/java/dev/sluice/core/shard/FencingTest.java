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
 * A leader whose lease was taken over behind its back (a long pause, a partition: it has not
 * renewed yet, so it still believes it leads) must not change the shard's events any more: every
 * write it makes is fenced by the lease token, and the first write refused stops the shard. An
 * outlet's ack it had queued is not its own write: that goes through unfenced once it stopped.
 */
class FencingTest {
  /**
   * An engine with renewals so rare that its lease keeper cannot notice a takeover during the test,
   * leading shard s1 and serving {@code queue}.
   */
  private static EngineHarness unawareLeader(String queue, String options) throws Exception {
    EngineHarness h =
        EngineHarness.fresh(FencingTest.class)
            .leaseTtl(Duration.ofSeconds(60))
            .leaseRenew(Duration.ofSeconds(20))
            .start();
    try {
      h.queue(queue, List.of("`order_id` BIGINT NULL"), "sluice_queue " + options);
      await().atMost(10, SECONDS).until(h.shard()::leading);
      return h;
    } catch (Exception | AssertionError e) {
      h.close();
      throw e;
    }
  }

  @Test
  void aDeposedLeaderCanNeitherAckNorFireAndStopsLeadingAtOnce() throws Exception {
    try (EngineHarness h = unawareLeader("fence_q", "poll_interval=50ms ack_wait=60s")) {
      ShardManager shard = h.shard();
      CollectingOutlet out = h.subscribe("fence_q", 100);
      h.db().exec("INSERT INTO fence_q (order_id) VALUES (1)");
      Delivery held = out.next(20_000);
      assertThat(held).isNotNull();

      h.leaseTakenBy("intruder", Duration.ofHours(1));
      assertThat(shard.leading()).as("the old leader has not noticed").isTrue();

      // Reaches the old leader's ack writer: refused under its lease, which stops the shard; then
      // written unfenced, as an outlet's answer (a CAS on its epoch) is wherever it lands.
      h.ack("fence_q", out, held);
      await().atMost(5, SECONDS).until(() -> !shard.leading());
      await()
          .atMost(5, SECONDS)
          .until(() -> h.queryLong("SELECT state FROM fence_q WHERE id = ?", held.id()) == 2);
      assertThat(shard.faultReason()).contains("fenced off").contains("token");
      assertThat(h.engine().faults()).containsKey(EngineHarness.SHARD);

      h.db().exec("INSERT INTO fence_q (order_id) VALUES (2)");
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(3))
          .until(
              () ->
                  h.queryLong(
                          "SELECT COUNT(*) FROM fence_q WHERE order_id = 2 AND state = 0 AND"
                              + " epoch = 0")
                      == 1);
      assertThat(out.got).as("nothing more was delivered").isEmpty();

      // At its next round the lease keeper finds the shard served by the intruder: this process
      // is a healthy standby again, not one given up for a fault for good.
      shard.servedElsewhere("intruder");
      assertThat(h.engine().faults()).isEmpty();
    }
  }

  /**
   * The same leader writing a fire while another manager takes the shard: the fire refused is never
   * applied, the event stays pending for the new leader.
   */
  @Test
  void aDeposedLeaderCannotFire() throws Exception {
    try (EngineHarness h = unawareLeader("fence_f", "poll_interval=50ms")) {
      ShardManager shard = h.shard();
      CollectingOutlet out = h.subscribe("fence_f", 100);
      h.leaseTakenBy("intruder", Duration.ofHours(1));
      h.db().exec("INSERT INTO fence_f (order_id) VALUES (1)");
      await().atMost(5, SECONDS).until(() -> !shard.leading());
      assertThat(shard.faultReason()).contains("fenced off");
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(2))
          .until(
              () -> h.queryLong("SELECT COUNT(*) FROM fence_f WHERE state = 0 AND epoch = 0") == 1);
      assertThat(out.got).isEmpty();
    }
  }
}
