package dev.sluice.manager.http;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.client.EventProducer;
import dev.sluice.client.QueueColumns;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The status page's open event groups, over plain HTTP ({@code /api/status}, what the page's script
 * draws; the browser test checks the drawing): a group whose completion event the manager read and
 * whose children wait is listed under its shard with its completion event and age; once its
 * children are acked it completes and the shard has no groups entry again.
 */
class OpenGroupsStatusTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static Harness h;
  static long completion;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(OpenGroupsStatusTest.class);
    h.exec(
        QueueConvention.createTableSql(
            "parts",
            List.of(
                "`body` VARCHAR(64) NULL",
                QueueColumns.GROUP_KEY_DEFINITION,
                QueueColumns.GROUP_INDEX_DEFINITION),
            "sluice_queue"));
    h.exec(
        QueueConvention.createTableSql(
            "parts_done",
            List.of("`body` VARCHAR(64) NULL", QueueColumns.COMPLETES_GROUP_DEFINITION),
            "sluice_queue"));
    try (Connection c = h.connect()) {
      EventProducer.insertInGroup(c, "parts", "upload-7", Map.of("body", "a"));
      EventProducer.insertInGroup(c, "parts", "upload-7", Map.of("body", "b"));
      completion = EventProducer.insertGroupCompletion(c, "parts_done", "upload-7", Map.of());
    }
    h.startManager();
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
  }

  static JsonNode shard() throws Exception {
    Http.Response r = Http.get(h.httpBase() + "/api/status");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body()).get("shards").get(0);
  }

  @Test
  void anOpenGroupIsListedUnderItsShardUntilItCompletes() throws Exception {
    // Sealed at the completion queue's first poll, sampled within 5 s.
    await().atMost(30, SECONDS).until(() -> shard().has("groups"));
    JsonNode s1 = shard();
    assertThat(s1.get("name").asText()).isEqualTo("s1");
    JsonNode groups = s1.get("groups");
    assertThat(groups.get("open").asLong()).isEqualTo(1);
    assertThat(groups.get("oldest")).hasSize(1);
    JsonNode g = groups.get("oldest").get(0);
    assertThat(g.get("key").asText()).isEqualTo("upload-7");
    assertThat(g.get("completion_queue").asText()).isEqualTo("parts_done");
    assertThat(g.get("completion_id").asLong()).isEqualTo(completion);
    assertThat(g.get("age_ms").asLong()).isBetween(0L, 120_000L);

    String page = Http.get(h.httpBase() + "/").body();
    assertThat(page).contains("id=\"groups-card\"").contains("Open event groups");

    RawReceiver children = h.rawReceiver("parts", "parts-worker", 4);
    RawReceiver done = h.rawReceiver("parts_done", "done-worker", 4);
    for (int i = 0; i < 2; i++) {
      Event e = children.events.poll(20, SECONDS);
      assertThat(e).as("child " + i).isNotNull();
      children.ack(e);
    }
    Event last = done.events.poll(30, SECONDS);
    assertThat(last).as("the completion event, once the children are acked").isNotNull();
    assertThat(last.getId()).isEqualTo(completion);
    done.ack(last);
    await().atMost(30, SECONDS).until(() -> !shard().has("groups"));
  }
}
