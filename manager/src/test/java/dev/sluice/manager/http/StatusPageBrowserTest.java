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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The status page in a real (headless) browser: it lists the queues with their counts and draws
 * both charts, and a shard's open event groups. The page's script writes what it drew into the DOM,
 * which Chromium dumps.
 */
class StatusPageBrowserTest {
  static Harness h;
  static long groupCompletion;

  @BeforeAll
  static void start() throws Exception {
    if (!Chromium.installed()) {
      return; // each test reports itself skipped, with the install command
    }
    h = new Harness(StatusPageBrowserTest.class);
    h.createQueue("held_q", "");
    h.createQueue("busy_q", "");
    StringBuilder values = new StringBuilder();
    for (int i = 0; i < 40; i++) {
      values.append(i == 0 ? "" : ",").append("(").append(i).append(")");
    }
    h.exec("INSERT INTO held_q (order_id) VALUES " + values);
    // An event group whose children nobody receives: sealed at the completion queue's first poll,
    // it stays open.
    h.exec(
        QueueConvention.createTableSql(
            "chunk_q",
            List.of(QueueColumns.GROUP_KEY_DEFINITION, QueueColumns.GROUP_INDEX_DEFINITION),
            "sluice_queue"));
    h.exec(
        QueueConvention.createTableSql(
            "chunk_done_q", List.of(QueueColumns.COMPLETES_GROUP_DEFINITION), "sluice_queue"));
    try (Connection c = h.connect()) {
      EventProducer.insertInGroup(c, "chunk_q", "file-42", Map.of());
      groupCompletion = EventProducer.insertGroupCompletion(c, "chunk_done_q", "file-42", Map.of());
    }
    h.startManager();
    RawReceiver r = h.rawReceiver("busy_q", "page-receiver", 8);
    // Chart points are made every second from the meters' deltas: let the first one be taken
    // before events flow, so that the latency of these dispatches lands on the chart.
    await().atMost(20, SECONDS).until(() -> series(status(), "s1/busy_q").size() >= 1);
    h.exec("INSERT INTO busy_q (order_id) VALUES " + values);
    for (int i = 0; i < 40; i++) {
      Event e = r.events.poll(10, SECONDS);
      assertThat(e).isNotNull();
      r.ack(e);
    }
    // Rows by state are sampled every 5 s: wait for the sample and a latency point.
    await()
        .atMost(20, SECONDS)
        .until(
            () -> {
              JsonNode s = status();
              boolean latency = false;
              for (JsonNode p : series(s, "s1/busy_q")) {
                latency |= !p.get(2).isNull();
              }
              return latency
                  && s.findValues("pending").stream().anyMatch(n -> n.asLong() == 40)
                  && s.findValues("acked").stream().anyMatch(n -> n.asLong() == 40)
                  && s.get("shards").get(0).has("groups");
            });
  }

  static JsonNode status() throws Exception {
    return new ObjectMapper().readTree(Http.get(h.httpBase() + "/api/status").body());
  }

  static JsonNode series(JsonNode status, String key) {
    JsonNode s = status.get("series").get(key);
    return s == null ? new ObjectMapper().createArrayNode() : s;
  }

  @BeforeEach
  void needsChromium() {
    Chromium.assumeInstalled();
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
  }

  @Test
  void pageShowsQueuesWithCountsAndDrawsBothCharts() throws Exception {
    String dom = Chromium.dumpDom(h.httpBase() + "/", 5000);

    assertThat(attr(dom, "tr", "data-queue=\"held_q\"", "data-pending")).isEqualTo("40");
    assertThat(attr(dom, "tr", "data-queue=\"busy_q\"", "data-acked")).isEqualTo("40");
    assertThat(attr(dom, "tr", "data-queue=\"busy_q\"", "data-paused")).isEqualTo("false");
    assertThat(Long.parseLong(attr(dom, "canvas", "id=\"rate-chart\"", "data-points")))
        .isGreaterThanOrEqualTo(3);
    assertThat(Long.parseLong(attr(dom, "canvas", "id=\"latency-chart\"", "data-points")))
        .isGreaterThan(0);
    assertThat(Long.parseLong(attr(dom, "canvas", "id=\"rate-chart\"", "data-series")))
        .as("a line per queue: busy_q, held_q, chunk_q and chunk_done_q")
        .isEqualTo(4);
    assertThat(dom).contains("page-receiver").contains("manager test");
    assertThat(Long.parseLong(attr(dom, "body", "", "data-updates"))).isGreaterThanOrEqualTo(1);

    assertThat(attr(dom, "div", "id=\"groups-card\"", "class")).isEqualTo("card");
    assertThat(dom).doesNotContain("id=\"groups-card\" hidden");
    assertThat(attr(dom, "tr", "data-group=\"file-42\"", "data-open")).isEqualTo("1");
    assertThat(attr(dom, "tr", "data-group=\"file-42\"", "data-completion-queue"))
        .isEqualTo("chunk_done_q");
    assertThat(attr(dom, "tr", "data-group=\"file-42\"", "data-completion-id"))
        .isEqualTo(Long.toString(groupCompletion));
    assertThat(dom).contains("chunk_done_q #" + groupCompletion);
  }

  /**
   * The value of attribute {@code name} of the first {@code tag} whose opening tag has {@code has}.
   */
  static String attr(String dom, String tag, String has, String name) {
    Matcher m = Pattern.compile("<" + tag + "\\b[^>]*>").matcher(dom);
    while (m.find()) {
      String open = m.group();
      if (open.contains(has)) {
        Matcher a = Pattern.compile("\\s" + Pattern.quote(name) + "=\"([^\"]*)\"").matcher(open);
        if (a.find()) {
          return a.group(1);
        }
        throw new AssertionError("<" + tag + "> with " + has + " has no " + name + ": " + open);
      }
    }
    throw new AssertionError("no <" + tag + "> with " + has + " in the page:\n" + dom);
  }
}
