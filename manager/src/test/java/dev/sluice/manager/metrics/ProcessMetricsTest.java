package dev.sluice.manager.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.proto.v1.ListQueuesRequest;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * A running manager exposes JVM, process, HikariCP and gRPC server metrics beside its own, in the
 * Prometheus names operators' dashboards expect.
 */
class ProcessMetricsTest {
  @Test
  void managerExposesJvmProcessPoolAndGrpcMetrics() throws Exception {
    try (Harness h = new Harness(ProcessMetricsTest.class)) {
      h.createQueue("obs_q", "");
      h.startManager();
      h.blocking().listQueues(ListQueuesRequest.getDefaultInstance());
      PrometheusMeterRegistry registry = (PrometheusMeterRegistry) h.registry;
      await()
          .untilAsserted(
              () ->
                  assertThat(registry.scrape())
                      .contains("jvm_memory_used_bytes{")
                      .contains("jvm_threads_live_threads ")
                      .contains("jvm_classes_loaded_classes ")
                      .contains("process_cpu_usage ")
                      .contains("process_uptime_seconds ")
                      .contains("system_cpu_count ")
                      .contains("hikaricp_connections_active{pool=\"sluice-")
                      .contains("hikaricp_connections_acquire_seconds_count{pool=\"sluice-")
                      .containsPattern(
                          "grpc_server_processing_duration_seconds_count\\{[^}]*"
                              + "method=\"ListQueues\"[^}]*statusCode=\"OK\"")
                      .contains("grpc_server_requests_received_messages_total{"));
    }
  }
}
