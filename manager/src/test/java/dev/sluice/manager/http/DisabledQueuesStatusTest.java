package dev.sluice.manager.http;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.manager.Harness;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The status page's disabled queues, over plain HTTP ({@code /api/status}): a table whose comment
 * has an option out of its bounds is listed with its shard and the engine's reason, next to the
 * shard's count of them. (Which tables are disabled and why is core's BadOptionContainmentTest.)
 */
class DisabledQueuesStatusTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(DisabledQueuesStatusTest.class);
    h.createQueue("good_q", "");
    h.createQueueWithComment("huge_q", "sluice_queue ack_wait=999999999999999d");
    h.startManager();
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
  }

  static JsonNode status() throws Exception {
    Http.Response r = Http.get(h.httpBase() + "/api/status");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  @Test
  void aDisabledTableIsListedWithItsShardAndReason() throws Exception {
    await().atMost(10, SECONDS).until(() -> status().get("disabled").size() == 1);
    JsonNode status = status();
    JsonNode d = status.get("disabled").get(0);
    assertThat(d.get("shard").asText()).isEqualTo("s1");
    assertThat(d.get("queue").asText()).isEqualTo("huge_q");
    assertThat(d.get("problem").asText())
        .contains("ack_wait=999999999999999d is too large: at most 1d");
    assertThat(status.get("shards").get(0).get("disabled").asInt()).isEqualTo(1);
  }
}
