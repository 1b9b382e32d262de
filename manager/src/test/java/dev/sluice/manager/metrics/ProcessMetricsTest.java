package dev.sluice.manager.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.proto.v1.ListQueuesRequest;
import dev.sluice.receiver.SluiceReceiver;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

  /**
   * The Grafana dashboard and the alert rules under ops/ name only series a manager exports (the
   * SDK's sluice_receiver_* excepted), so a renamed metric cannot leave them silently empty.
   */
  @Test
  void dashboardAndAlertsUseOnlySeriesTheManagerExports() throws Exception {
    Path ops = Path.of("..", "ops");
    String dashboard = Files.readString(ops.resolve("grafana/sluice-dashboard.json"));
    String alerts = Files.readString(ops.resolve("prometheus/sluice-alerts.yml"));
    Set<String> used = new TreeSet<>();
    Matcher m =
        Pattern.compile("\\b(sluice|hikaricp|jvm|process)_[a-z_]+").matcher(dashboard + alerts);
    while (m.find()) {
      String name = m.group().replaceAll("_(bucket|count|sum)$", "");
      if (!name.startsWith("sluice_receiver_")) {
        used.add(name);
      }
    }
    assertThat(used).contains("sluice_queue_oldest_due_age_seconds", "sluice_shard_lease_held");
    // A channel's and an ordered queue's series need a broker and an ordered table: this manager
    // has neither, so those must be on the metrics reference, whose every name DocsMetricsTest
    // shows registered by a manager that has both.
    String reference = Files.readString(Path.of("..", "docs", "reference", "metrics.md"));
    Set<String> conditional = new TreeSet<>();
    for (String name : used) {
      if (name.startsWith("sluice_channel_") || name.startsWith("sluice_ordering_")) {
        assertThat(reference).as(name + " on docs/reference/metrics.md").contains("`" + name);
        conditional.add(name);
      }
    }
    used.removeAll(conditional);
    try (Harness h = new Harness(ProcessMetricsTest.class)) {
      h.createQueue("ops_q", "");
      h.exec("INSERT INTO ops_q (order_id) VALUES (1)");
      h.startManager();
      // One event delivered, so that per-tenant series exist too.
      h.closeLater(
          SluiceReceiver.builder()
              .target(h.target())
              .queue("ops_q")
              .receiverId("ops")
              .handler(e -> {})
              .build()
              .start());
      await().until(() -> h.queryLong("SELECT COUNT(*) FROM ops_q WHERE state = 2") == 1);
      PrometheusMeterRegistry registry = (PrometheusMeterRegistry) h.registry;
      await()
          .untilAsserted(
              () -> {
                String scrape = registry.scrape();
                for (String name : used) {
                  assertThat(scrape).as(name).containsPattern("(?m)^" + name + "(_bucket)?[{ ]");
                }
              });
    }
  }
}
