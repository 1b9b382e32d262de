package dev.sluice.core.shard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.QueueConvention;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A worker loop hit by an {@code Error} (an OutOfMemoryError, say) must not stop its queue while
 * the shard's lease keeps renewing: the loop counts the error and goes on, and a worker thread that
 * dies anyway makes the shard give its lease up and say why in the engine's faults (what the
 * manager's readiness and health report), until the shard is served again.
 */
class WorkerFaultTest {
  private static final List<String> LOOPS =
      List.of(
          FaultHook.POLLER,
          FaultHook.DISPATCHER,
          FaultHook.FIRER,
          FaultHook.ACKS,
          FaultHook.PURGER);

  private static final List<String> COLUMNS = List.of("`order_id` BIGINT NULL");

  @AfterEach
  void disarm() {
    FaultHook.reset();
  }

  @Test
  void everyLoopSurvivesAnErrorAndCountsIt() throws Exception {
    try (EngineHarness h = EngineHarness.fresh(WorkerFaultTest.class).start()) {
      h.queue("fault_q", COLUMNS, "sluice_queue poll_interval=50ms purge_after=1s");
      CollectingOutlet out = h.subscribe("fault_q", 100);
      h.db().exec("INSERT INTO fault_q (order_id) VALUES (0)");
      Delivery first = out.next(20_000);
      assertThat(first).isNotNull();
      h.ack("fault_q", out, first);

      for (String loop : LOOPS) {
        FaultHook.arm(loop, "fault_q");
      }
      await()
          .atMost(10, SECONDS)
          .untilAsserted(() -> assertThat(LOOPS).noneMatch(l -> FaultHook.pending(l, "fault_q")));

      for (int i = 1; i <= 20; i++) {
        h.db().exec("INSERT INTO fault_q (order_id) VALUES (" + i + ")");
      }
      for (int i = 1; i <= 20; i++) {
        Delivery e = out.next(20_000);
        assertThat(e).as("event %d delivered after the faults", i).isNotNull();
        h.ack("fault_q", out, e);
      }
      // Acked, then purged: the ack writer and the purger still run.
      await().atMost(20, SECONDS).until(() -> h.queryLong("SELECT COUNT(*) FROM fault_q") == 0);
      for (String loop : LOOPS) {
        Counter c =
            h.registry()
                .find("sluice.loop.errors")
                .tags("shard", EngineHarness.SHARD, "queue", "fault_q", "loop", loop)
                .counter();
        assertThat(c).as("sluice_loop_errors_total{loop=%s}", loop).isNotNull();
        assertThat(c.count()).as("errors of the %s loop", loop).isEqualTo(1.0);
      }
      assertThat(h.shard().leading()).isTrue();
      assertThat(h.engine().faults()).as("no shard given up").isEmpty();
    }
  }

  @Test
  void aDeadWorkerGivesTheShardUpUntilItIsServedAgain() throws Exception {
    try (EngineHarness h =
        EngineHarness.fresh(WorkerFaultTest.class)
            .leaseTtl(Duration.ofSeconds(1))
            .leaseRenew(Duration.ofMillis(200))
            .start()) {
      h.queue("dead_q", COLUMNS, "sluice_queue poll_interval=50ms");
      CollectingOutlet out = h.subscribe("dead_q", 100);
      h.db().exec("INSERT INTO dead_q (order_id) VALUES (0)");
      Delivery first = out.next(20_000);
      assertThat(first).isNotNull();
      h.ack("dead_q", out, first);
      ShardManager shard = h.shard();

      FaultHook.armFatal(FaultHook.DISPATCHER, "dead_q");
      // Given up within seconds: not leading, the lease released, the fault reported.
      await()
          .atMost(5, SECONDS)
          .untilAsserted(
              () -> {
                assertThat(shard.leading()).as("leading").isFalse();
                assertThat(h.engine().faults())
                    .as("the shard given up, and why")
                    .hasEntrySatisfying(
                        EngineHarness.SHARD,
                        why -> assertThat(why).contains("dead_q").contains("died"));
                assertThat(
                        h.queryLong(
                            "SELECT COUNT(*) FROM sluice_lease WHERE shard = 's1' AND expires_ns > "
                                + QueueConvention.NOW_NS_SQL))
                    .as("an unexpired lease")
                    .isZero();
              });
      assertThat(
              h.registry()
                  .find("sluice.worker.deaths")
                  .tags("shard", EngineHarness.SHARD)
                  .counter()
                  .count())
          .isEqualTo(1.0);

      // Then served again (no other manager here to take it): a new event is delivered.
      h.db().exec("INSERT INTO dead_q (order_id) VALUES (1)");
      Delivery again = out.next(30_000);
      assertThat(again).as("delivered once the shard is served again").isNotNull();
      assertThat(again.id()).isNotEqualTo(first.id());
      h.ack("dead_q", out, again); // (the engine's stop need not wait for it)
      await().atMost(10, SECONDS).until(() -> h.engine().faults().isEmpty());
    }
  }
}
