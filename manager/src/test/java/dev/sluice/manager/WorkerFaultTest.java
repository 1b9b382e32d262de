package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.micrometer.core.instrument.Counter;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A worker loop hit by an {@code Error} (an OutOfMemoryError, say) must not stop its queue while
 * the shard's lease keeps renewing: the loop counts the error and goes on, and a worker thread that
 * dies anyway makes the shard give its lease up and health say so, until the shard is served again.
 */
class WorkerFaultTest {
  private static final List<String> LOOPS =
      List.of(
          FaultHook.POLLER,
          FaultHook.DISPATCHER,
          FaultHook.FIRER,
          FaultHook.ACKS,
          FaultHook.PURGER);

  @AfterEach
  void disarm() {
    FaultHook.reset();
  }

  @Test
  void everyLoopSurvivesAnErrorAndCountsIt() throws Exception {
    try (Harness h = new Harness(WorkerFaultTest.class)) {
      h.createQueue("fault_q", "poll_interval=50ms purge_after=1s");
      h.startManager();
      RawReceiver r = h.rawReceiver("fault_q", "r", 100);
      h.exec("INSERT INTO fault_q (order_id) VALUES (0)");
      Event first = r.events.poll(20, SECONDS);
      assertThat(first).isNotNull();
      r.ack(first);

      for (String loop : LOOPS) {
        FaultHook.arm(loop, "fault_q");
      }
      await()
          .atMost(10, SECONDS)
          .untilAsserted(() -> assertThat(LOOPS).noneMatch(l -> FaultHook.pending(l, "fault_q")));

      for (int i = 1; i <= 20; i++) {
        h.exec("INSERT INTO fault_q (order_id) VALUES (" + i + ")");
      }
      for (int i = 1; i <= 20; i++) {
        Event e = r.events.poll(20, SECONDS);
        assertThat(e).as("event %d delivered after the faults", i).isNotNull();
        r.ack(e);
      }
      // Acked, then purged: the ack writer and the purger still run.
      await().atMost(20, SECONDS).until(() -> h.queryLong("SELECT COUNT(*) FROM fault_q") == 0);
      for (String loop : LOOPS) {
        Counter c =
            h.registry
                .find("sluice.loop.errors")
                .tags("shard", "s1", "queue", "fault_q", "loop", loop)
                .counter();
        assertThat(c).as("sluice_loop_errors_total{loop=%s}", loop).isNotNull();
        assertThat(c.count()).as("errors of the %s loop", loop).isEqualTo(1.0);
      }
      assertThat(h.server().ready()).isTrue();
    }
  }

  @Test
  void aDeadWorkerGivesTheShardUpUntilItIsServedAgain() throws Exception {
    try (Harness h = new Harness(WorkerFaultTest.class)) {
      h.createQueue("dead_q", "poll_interval=50ms");
      h.startManager(
          h.configBuilder()
              .leaseTtl(java.time.Duration.ofSeconds(1))
              .leaseRenew(java.time.Duration.ofMillis(200))
              .build(),
          Clock.systemUTC());
      RawReceiver r = h.rawReceiver("dead_q", "r", 100);
      h.exec("INSERT INTO dead_q (order_id) VALUES (0)");
      Event first = r.events.poll(20, SECONDS);
      assertThat(first).isNotNull();
      r.ack(first);
      String base = h.httpBase();
      ShardManager shard = h.server().engine().shards().get(0);

      FaultHook.armFatal(FaultHook.DISPATCHER, "dead_q");
      // Given up within seconds: lease released, /readyz failing, gRPC health NOT_SERVING.
      await()
          .atMost(5, SECONDS)
          .untilAsserted(
              () -> {
                assertThat(shard.leading()).as("leading").isFalse();
                assertThat(HealthTest.httpStatus(base + "/readyz")).isEqualTo(503);
                assertThat(HealthTest.grpcHealth(h, SluiceGrpc.SERVICE_NAME))
                    .isEqualTo(ServingStatus.NOT_SERVING);
                assertThat(
                        h.queryLong(
                            "SELECT COUNT(*) FROM sluice_lease WHERE shard = 's1' AND expires_ns > "
                                + dev.sluice.db.QueueConvention.NOW_NS_SQL))
                    .as("an unexpired lease")
                    .isZero();
              });
      assertThat(h.registry.find("sluice.worker.deaths").tags("shard", "s1").counter().count())
          .isEqualTo(1.0);

      // Then served again (no other manager here to take it): a new event is delivered.
      h.exec("INSERT INTO dead_q (order_id) VALUES (1)");
      Event again = r.events.poll(30, SECONDS);
      assertThat(again).as("delivered once the shard is served again").isNotNull();
      assertThat(again.getId()).isNotEqualTo(first.getId());
      await()
          .atMost(10, SECONDS)
          .untilAsserted(
              () -> {
                assertThat(HealthTest.httpStatus(base + "/readyz")).isEqualTo(200);
                assertThat(HealthTest.grpcHealth(h, SluiceGrpc.SERVICE_NAME))
                    .isEqualTo(ServingStatus.SERVING);
              });
    }
  }
}
