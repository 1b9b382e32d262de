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
 * A leader is deposed (another manager took its lease) while acks of its outlet are on their way to
 * the table. The leader's own writes are fenced and refused now; but an ack is a compare-and-set on
 * the epoch the outlet was given, right whoever writes it. The acks it had queued must be written
 * through the unfenced path, as a graceful stop writes them, not dropped: else every event they
 * acked is delivered again after its ack deadline.
 */
class DeposedAcksTest {
  @Test
  void acksQueuedWhenTheLeaderIsDeposedAreWrittenNotDropped() throws Exception {
    // Renewals far apart: the leader learns of the takeover from its refused ack write.
    try (EngineHarness h =
        EngineHarness.fresh(DeposedAcksTest.class)
            .leaseTtl(Duration.ofSeconds(30))
            .leaseRenew(Duration.ofSeconds(10))
            .start()) {
      h.queue(
          "deposed_q",
          List.of("`order_id` BIGINT NULL"),
          "sluice_queue poll_interval=50ms ack_wait=60s");
      ShardManager shard = h.shard();
      await().atMost(10, SECONDS).until(shard::leading);

      CollectingOutlet out = h.subscribe("deposed_q", 2);
      h.db().exec("INSERT INTO deposed_q (order_id) VALUES (1), (2)");
      Delivery first = out.next(20_000);
      Delivery second = out.next(20_000);
      assertThat(first).isNotNull();
      assertThat(second).isNotNull();

      // Another manager takes the lease, for longer than this test.
      h.leaseTakenBy("intruder", Duration.ofSeconds(120));
      assertThat(shard.leading()).as("the leader has not noticed yet").isTrue();

      // The outlet acks what it was given: the deposed leader's queue takes the acks.
      h.ack("deposed_q", out, first);
      h.ack("deposed_q", out, second);
      await().atMost(10, SECONDS).until(() -> !shard.leading());
      await()
          .atMost(10, SECONDS)
          .untilAsserted(
              () ->
                  assertThat(h.queryLong("SELECT COUNT(*) FROM deposed_q WHERE state = 2"))
                      .as("rows acked (not left fired, to be delivered again)")
                      .isEqualTo(2));
    }
  }
}
