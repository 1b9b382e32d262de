package dev.sluice.manager.health;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.proto.v1.Event;
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
import org.junit.jupiter.api.Test;

/**
 * Health goes NOT_SERVING, and /readyz 503, before a graceful stop begins to drain — while the gRPC
 * server still answers — so that load balancers stop sending work first.
 */
class HealthTest {
  static int httpStatus(String url) throws Exception {
    return HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  static ServingStatus grpcHealth(Harness h, String service) {
    return HealthGrpc.newBlockingStub(h.channel())
        .withDeadlineAfter(5, SECONDS)
        .check(HealthCheckRequest.newBuilder().setService(service).build())
        .getStatus();
  }

  @Test
  void notServingAndNotReadyBeforeShutdownDrains() throws Exception {
    try (Harness h = new Harness(HealthTest.class)) {
      h.createQueue("health_q", "ack_wait=10m");
      h.exec("INSERT INTO health_q (order_id) VALUES (1)");
      // A long shutdown timeout: the drain below ends only when the receiver acks.
      ManagerConfig c = h.config();
      h.startManager(
          ManagerConfig.builder()
              .managerId(c.managerId())
              .grpcHost(c.grpcHost())
              .grpcPort(0)
              .httpHost("127.0.0.1")
              .httpPort(0)
              .shard(c.shards().get(0))
              .discoveryInterval(c.discoveryInterval())
              .shutdownTimeout(Duration.ofSeconds(60))
              .build(),
          Clock.systemUTC());
      String base = h.httpBase();
      assertThat(grpcHealth(h, "")).isEqualTo(ServingStatus.SERVING);
      assertThat(grpcHealth(h, SluiceGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.SERVING);
      assertThat(httpStatus(base + "/readyz")).isEqualTo(200);
      assertThat(httpStatus(base + "/healthz")).isEqualTo(200);

      // A receiver holds an event: the stop waits for it (up to half the shutdown timeout).
      RawReceiver r = h.rawReceiver("health_q", "holder", 1);
      Event e = r.events.poll(10, SECONDS);
      assertThat(e).isNotNull();
      Thread stopper = new Thread(h::stopManager, "test-stopper");
      stopper.start();

      await().atMost(5, SECONDS).until(() -> !h.server().ready());
      assertThat(stopper.isAlive()).isTrue();
      assertThat(grpcHealth(h, "")).isEqualTo(ServingStatus.NOT_SERVING);
      assertThat(grpcHealth(h, SluiceGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.NOT_SERVING);
      assertThat(httpStatus(base + "/readyz")).isEqualTo(503);
      assertThat(httpStatus(base + "/healthz")).isEqualTo(200);

      assertThat(h.queryLong("SELECT state FROM health_q WHERE order_id = 1")).isEqualTo(1);
      r.ack(e); // the drain ends, the stop completes
      stopper.join(30_000);
      assertThat(stopper.isAlive()).isFalse();
      assertThat(h.queryLong("SELECT state FROM health_q WHERE order_id = 1")).isEqualTo(2);
    }
  }
}
