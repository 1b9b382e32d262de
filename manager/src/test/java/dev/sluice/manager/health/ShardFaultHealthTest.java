package dev.sluice.manager.health;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.loop.FaultHook;
import dev.sluice.manager.Harness;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A shard the engine gave up for a fault (here a worker thread that died) makes the manager unready
 * until the shard is served again: {@code /readyz} answers 503 and gRPC health is NOT_SERVING for
 * the receivers' service, so that load balancers send receivers elsewhere. What the engine does
 * with the fault (the lease given up, the counters, serving again) is core's {@code
 * WorkerFaultTest}.
 */
class ShardFaultHealthTest {
  @AfterEach
  void disarm() {
    FaultHook.reset();
  }

  @Test
  void aShardGivenUpForADeadWorkerIsNotReadyUntilServedAgain() throws Exception {
    try (Harness h = new Harness(ShardFaultHealthTest.class)) {
      h.createQueue("dead_q", "poll_interval=50ms");
      h.startManager(
          h.configBuilder()
              .leaseTtl(Duration.ofSeconds(1))
              .leaseRenew(Duration.ofMillis(200))
              .build(),
          Clock.systemUTC());
      await().atMost(10, SECONDS).until(() -> h.server().engine().find("dead_q").isPresent());
      String readyz = h.httpBase() + "/readyz";
      assertThat(httpStatus(readyz)).isEqualTo(200);
      assertThat(grpcHealth(h)).isEqualTo(ServingStatus.SERVING);

      FaultHook.armFatal(FaultHook.DISPATCHER, "dead_q");
      h.exec("INSERT INTO dead_q (order_id) VALUES (1)"); // the dispatcher's next round
      await()
          .atMost(10, SECONDS)
          .untilAsserted(
              () -> {
                assertThat(httpStatus(readyz)).isEqualTo(503);
                assertThat(grpcHealth(h)).isEqualTo(ServingStatus.NOT_SERVING);
              });

      // Served again (no other manager here to take it).
      await()
          .atMost(30, SECONDS)
          .untilAsserted(
              () -> {
                assertThat(httpStatus(readyz)).isEqualTo(200);
                assertThat(grpcHealth(h)).isEqualTo(ServingStatus.SERVING);
              });
    }
  }

  static int httpStatus(String url) throws Exception {
    return HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  static ServingStatus grpcHealth(Harness h) {
    return HealthGrpc.newBlockingStub(h.channel())
        .withDeadlineAfter(2, SECONDS)
        .check(HealthCheckRequest.newBuilder().setService(SluiceGrpc.SERVICE_NAME).build())
        .getStatus();
  }
}
