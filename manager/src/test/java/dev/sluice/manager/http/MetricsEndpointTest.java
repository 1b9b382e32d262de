package dev.sluice.manager.http;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.manager.SluiceServer;
import dev.sluice.proto.v1.Event;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The manager's HTTP port: /metrics shows what happened (counters, latency timers, sampled rows by
 * state, tenants, the lease hook), /api/status backs the page, /healthz and /readyz answer.
 */
class MetricsEndpointTest {
  static Harness h;
  static final Map<String, String> Q = Map.of("shard", "s1", "queue", "metrics_q");

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(MetricsEndpointTest.class);
    h.createQueue("metrics_q", "");
    h.createQueue("metrics_wait_q", "");
    h.startManager();
    try (Connection c = h.connect()) {
      for (int i = 0; i < 5; i++) {
        EventProducer.insert(
            c,
            "metrics_q",
            Map.of("order_id", i),
            EventOptions.builder().tenant(i < 3 ? "acme" : "globex").build());
      }
      for (int i = 0; i < 2; i++) {
        EventProducer.insert(
            c,
            "metrics_q",
            Map.of("order_id", 100 + i),
            EventOptions.builder().delay(Duration.ofHours(1)).build());
      }
    }
    RawReceiver r = h.rawReceiver("metrics_q", "m-1", 10);
    for (int i = 0; i < 5; i++) {
      Event e = r.events.poll(10, SECONDS);
      assertThat(e).as("event %d", i).isNotNull();
      r.ack(e);
    }
    await().atMost(10, SECONDS).until(() -> r.results.size() == 5);
    // Two events of tenant "late" came due 3 s before they were even inserted: each waits 3 s+.
    try (Connection c = h.connect()) {
      for (int i = 0; i < 2; i++) {
        EventProducer.insert(
            c,
            "metrics_wait_q",
            Map.of("order_id", i),
            EventOptions.builder()
                .tenant("late")
                .fireAt(java.time.Instant.now().minusSeconds(LATE_SECONDS))
                .build());
      }
    }
    RawReceiver w = h.rawReceiver("metrics_wait_q", "m-2", 10);
    for (int i = 0; i < 2; i++) {
      Event e = w.events.poll(10, SECONDS);
      assertThat(e).as("late event %d", i).isNotNull();
      w.ack(e);
    }
  }

  static final long LATE_SECONDS = 3;
  static final double SLACK = 0.25;
  static final Map<String, String> WAIT_Q =
      Map.of("shard", "s1", "queue", "metrics_wait_q", "tenant", "late");

  @AfterAll
  static void stop() {
    h.close();
  }

  static String scrape() {
    Http.Response r = Http.get(h.httpBase() + "/metrics");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.contentType()).startsWith("text/plain");
    return r.body();
  }

  static Double value(String name, Map<String, String> labels) {
    return Http.sample(scrape(), name, labels);
  }

  static Map<String, String> with(Map<String, String> base, String k, String v) {
    Map<String, String> m = new java.util.HashMap<>(base);
    m.put(k, v);
    return m;
  }

  @Test
  void countersAndLatencyTimersMatchWhatHappened() {
    await()
        .atMost(10, SECONDS)
        .until(() -> Double.valueOf(5.0).equals(value("sluice_events_acked_total", Q)));
    assertThat(value("sluice_events_dispatched_total", Q)).isEqualTo(5.0);
    assertThat(value("sluice_due_to_dispatch_seconds_count", Q)).isEqualTo(5.0);
    assertThat(value("sluice_dispatch_to_ack_seconds_count", Q)).isEqualTo(5.0);
    assertThat(value("sluice_db_errors_total", Q)).isEqualTo(0.0);
    assertThat(value("sluice_shard_lease_held", Map.of("shard", "s1"))).isEqualTo(1.0);
    assertThat(value("sluice_receivers_connected", Q)).isEqualTo(1.0);
    assertThat(value("sluice_queue_paused", Q)).isEqualTo(0.0);
  }

  @Test
  void rowsByStateAreSampledNotQueriedPerScrape() {
    await()
        .atMost(15, SECONDS)
        .until(
            () ->
                Double.valueOf(5.0)
                    .equals(value("sluice_queue_events", with(Q, "state", "acked"))));
    assertThat(value("sluice_queue_events", with(Q, "state", "pending"))).isEqualTo(2.0);
    assertThat(value("sluice_queue_events", with(Q, "state", "dead"))).isEqualTo(0.0);
    // The two pending events are scheduled an hour ahead: none is due, so nothing waits.
    assertThat(value("sluice_queue_oldest_due_age_seconds", Q)).isEqualTo(0.0);
  }

  @Test
  void tenantsHaveTheirOwnSeries() {
    await()
        .atMost(15, SECONDS)
        .until(
            () ->
                Double.valueOf(3.0)
                    .equals(
                        value("sluice_tenant_events_dispatched_total", with(Q, "tenant", "acme"))));
    assertThat(value("sluice_tenant_events_dispatched_total", with(Q, "tenant", "globex")))
        .isEqualTo(2.0);
    assertThat(value("sluice_tenant_in_flight_events", with(Q, "tenant", "acme"))).isEqualTo(0.0);
  }

  @Test
  void aTenantsWaitIsAddedUpAndItsLongestRecentWaitShown() throws Exception {
    await()
        .atMost(15, SECONDS)
        .until(
            () ->
                Double.valueOf(2.0).equals(value("sluice_tenant_events_dispatched_total", WAIT_Q)));
    // Each waited LATE_SECONDS, less at most SLACK: the manager's view of the server's clock errs
    // late by up to a sync's round trip (so it never fires early), and with the binlog followed
    // an event reaches the window milliseconds after its insert, which no longer hides that.
    assertThat(value("sluice_tenant_wait_seconds_total", WAIT_Q))
        .as("two events, each due %d s before it was inserted", LATE_SECONDS)
        .isGreaterThanOrEqualTo(2.0 * (LATE_SECONDS - SLACK));
    assertThat(value("sluice_tenant_wait_seconds_max", WAIT_Q))
        .isGreaterThanOrEqualTo(LATE_SECONDS - SLACK);
    JsonNode late = null;
    for (JsonNode t : status().get("tenants")) {
      if (t.get("tenant").asText().equals("late")) {
        late = t;
      }
    }
    assertThat(late).as("tenant 'late' on the status page").isNotNull();
    assertThat(late.get("mean_wait_ms").asDouble())
        .isGreaterThanOrEqualTo((LATE_SECONDS - SLACK) * 1000.0);
    assertThat(late.get("max_wait_ms").asDouble())
        .isGreaterThanOrEqualTo((LATE_SECONDS - SLACK) * 1000.0);
  }

  @Test
  void statusJsonBacksThePage() throws Exception {
    await()
        .atMost(15, SECONDS)
        .until(
            () -> {
              JsonNode q = queue(status());
              return q != null && q.get("acked").asLong() == 5;
            });
    JsonNode s = status();
    assertThat(s.get("ready").asBoolean()).isTrue();
    assertThat(s.get("manager").asText()).isEqualTo("test");
    assertThat(s.get("shards").get(0).get("name").asText()).isEqualTo("s1");
    JsonNode q = queue(s);
    assertThat(q.get("pending").asLong()).isEqualTo(2);
    assertThat(q.get("paused").asBoolean()).isFalse();
    assertThat(q.get("dispatched_total").asLong()).isEqualTo(5);
    assertThat(s.get("receivers").get(0).get("receiver_id").asText()).isEqualTo("m-1");
    assertThat(s.get("receivers").get(0).get("max_in_flight").asInt()).isEqualTo(10);
    assertThat(s.get("tenants").findValuesAsText("tenant")).contains("acme", "globex");
    await().atMost(10, SECONDS).until(() -> status().get("series").get("s1/metrics_q").size() >= 2);
  }

  static JsonNode status() throws Exception {
    Http.Response r = Http.get(h.httpBase() + "/api/status");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.contentType()).startsWith("application/json");
    return new ObjectMapper().readTree(r.body());
  }

  static JsonNode queue(JsonNode status) {
    for (JsonNode q : status.get("queues")) {
      if (q.get("queue").asText().equals("metrics_q")) {
        return q;
      }
    }
    return null;
  }

  @Test
  void healthAndReadinessAndThePageItself() {
    assertThat(Http.get(h.httpBase() + "/healthz").status()).isEqualTo(200);
    Http.Response ready = Http.get(h.httpBase() + "/readyz");
    assertThat(ready.status()).isEqualTo(200);
    assertThat(ready.body()).contains("ready");
    Http.Response page = Http.get(h.httpBase() + "/");
    assertThat(page.status()).isEqualTo(200);
    assertThat(page.contentType()).startsWith("text/html");
    assertThat(page.body()).contains("<canvas id=\"rate-chart\"").contains("/status.js");
    assertThat(Http.get(h.httpBase() + "/status.js").body()).contains("drawChart");
    assertThat(Http.get(h.httpBase() + "/status.css").status()).isEqualTo(200);
    assertThat(Http.get(h.httpBase() + "/nope").status()).isEqualTo(404);
  }

  @Test
  void metricsAnswer503WithoutAPrometheusRegistry() {
    SluiceServer plain =
        new SluiceServer(
                // another process beside the harness's manager: its own id, or it may not lead
                h.configBuilder().managerId("plain-registry").build(),
                Clock.systemUTC(),
                new SimpleMeterRegistry())
            .start();
    try {
      Http.Response r = Http.get("http://127.0.0.1:" + plain.httpPort() + "/metrics");
      assertThat(r.status()).isEqualTo(503);
      assertThat(r.body()).contains("SimpleMeterRegistry").contains("PrometheusMeterRegistry");
      assertThat(Http.get("http://127.0.0.1:" + plain.httpPort() + "/readyz").status())
          .isEqualTo(200);
    } finally {
      plain.stop();
    }
  }
}
