package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.db.EventState;
import dev.sluice.test.SluiceExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The {@code sluice} Actuator endpoint over real HTTP, with a real manager and database: it lists
 * the listeners, and pausing one stops its deliveries (the event in its handler finishes and is
 * acked) until it is resumed.
 */
@SpringBootTest(
    classes = SluiceListenersEndpointTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "sluice.receiver.shutdown-timeout=5s",
      "sluice.receiver.reconnect-max=500ms",
      "management.endpoints.web.exposure.include=health,sluice",
      "spring.flyway.enabled=false"
    })
class SluiceListenersEndpointTest {
  @RegisterExtension
  static SluiceExtension sluice =
      SluiceExtension.builder().migrations("classpath:db/endpoint").build();

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry r) {
    r.add("spring.datasource.url", sluice::jdbcUrl);
    r.add("spring.datasource.username", () -> sluice.database().user());
    r.add("spring.datasource.password", () -> sluice.database().password());
    r.add("sluice.receiver.targets", sluice::target);
  }

  @LocalServerPort int port;

  private final HttpClient http = HttpClient.newHttpClient();
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void pausingOverHttpStopsDeliveriesUntilResumed() throws Exception {
    JsonNode all = get("/actuator/sluice");
    JsonNode watched = listener(all, "watched");
    assertThat(watched.path("queue").asText()).isEqualTo("watched_events");
    assertThat(watched.path("state").asText()).isEqualTo("RUNNING");

    // An event whose handler is still running when the pause comes: it finishes and is acked.
    long slow = sluice.insert("watched_events", Map.of("label", "slow"));
    await().atMost(Duration.ofSeconds(20)).until(() -> Watched.started.contains("slow"));
    HttpResponse<String> paused = post("/actuator/sluice/watched", "{\"action\":\"pause\"}");
    assertThat(paused.statusCode()).isEqualTo(200);
    assertThat(json.readTree(paused.body()).path("state").asText()).isEqualTo("PAUSED");
    assertThat(Watched.finished).contains("slow");
    sluice.awaitAcked("watched_events", slow);
    assertThat(listener(get("/actuator/sluice"), "watched").path("state").asText())
        .isEqualTo("PAUSED");

    // Paused: a new event waits in the table.
    long waiting = sluice.insert("watched_events", Map.of("label", "waiting"));
    await()
        .during(Duration.ofMillis(1500))
        .atMost(Duration.ofSeconds(3))
        .until(() -> !Watched.started.contains("waiting"));
    assertThat(sluice.event("watched_events", waiting).state()).isEqualTo(EventState.PENDING);

    // Resume every listener: the waiting event is delivered.
    HttpResponse<String> resumed = post("/actuator/sluice", "{\"action\":\"resume\"}");
    assertThat(resumed.statusCode()).isEqualTo(200);
    sluice.awaitAcked("watched_events", waiting);
    assertThat(Watched.finished).containsExactly("slow", "waiting");
    assertThat(listener(get("/actuator/sluice"), "watched").path("state").asText())
        .isEqualTo("RUNNING");
  }

  @Test
  void anUnknownListenerOrActionIsRefused() throws Exception {
    assertThat(send(HttpRequest.newBuilder(uri("/actuator/sluice/nobody")).GET()).statusCode())
        .isEqualTo(404);
    assertThat(post("/actuator/sluice/nobody", "{\"action\":\"pause\"}").statusCode())
        .isEqualTo(400);
    assertThat(post("/actuator/sluice/watched", "{\"action\":\"explode\"}").statusCode())
        .isEqualTo(400);
  }

  private static JsonNode listener(JsonNode all, String id) {
    for (JsonNode l : all.path("listeners")) {
      if (l.path("id").asText().equals(id)) {
        return l;
      }
    }
    throw new AssertionError("no listener " + id + " in " + all);
  }

  private JsonNode get(String path) throws Exception {
    HttpResponse<String> r = send(HttpRequest.newBuilder(uri(path)).GET());
    assertThat(r.statusCode()).as("GET %s: %s", path, r.body()).isEqualTo(200);
    return json.readTree(r.body());
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return send(
        HttpRequest.newBuilder(uri(path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
    return http.send(
        request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {
    @Bean
    Watched watched() {
      return new Watched();
    }
  }

  static class Watched {
    static final List<String> started = new CopyOnWriteArrayList<>();
    static final List<String> finished = new CopyOnWriteArrayList<>();

    @SluiceListener(id = "watched", queue = "watched_events", concurrency = 1)
    public void on(Map<String, Object> columns) throws InterruptedException {
      String label = (String) columns.get("label");
      started.add(label);
      if (label.equals("slow")) {
        Thread.sleep(1000); // the slow handler's work time (what the test watches), not a wait
      }
      finished.add(label);
    }
  }
}
