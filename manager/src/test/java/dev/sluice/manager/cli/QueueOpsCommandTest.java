package dev.sluice.manager.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice queue list|stats|pause|resume} against a real database and a running manager. */
class QueueOpsCommandTest {
  static Harness h;
  @TempDir static Path dir;
  static String config;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(QueueOpsCommandTest.class);
    h.createQueue("stats_q", "max_attempts=3");
    h.createQueue("pause_q", "");
    h.createQueueWithComment("broken_q", "sluice_queue ack_wait=banana");
    // stats_q: acme 2 pending (one due in an hour) + 1 dead + 1 acked; globex 1 cancelled.
    try (Connection c = h.connect()) {
      EventProducer.insert(c, "stats_q", Map.of("order_id", 1), tenant("acme"));
      EventProducer.insert(
          c,
          "stats_q",
          Map.of("order_id", 2),
          EventOptions.builder().tenant("acme").delay(Duration.ofHours(1)).build());
    }
    h.exec(
        "INSERT INTO stats_q (order_id, tenant, state, epoch) VALUES"
            + " (3, 'acme', 3, 3), (4, 'acme', 2, 1), (5, 'globex', 4, 0)");
    // The due pending event has waited a minute.
    h.exec("UPDATE stats_q SET time_next = time_next - 60000000000 WHERE order_id = 1");
    config = Cli.config(dir, h).toString();
  }

  static EventOptions tenant(String t) {
    return EventOptions.builder().tenant(t).build();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void statsCountRowsByStateAndTenant() throws Exception {
    Cli.Result r = Cli.run("queue", "stats", "stats_q", "-c", config, "--tenants");
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.out())
        .containsPattern("s1\\s+stats_q\\s+2\\s+0\\s+1\\s+1\\s+1\\s+1m\\ds")
        .containsPattern("s1\\s+stats_q\\s+acme\\s+2\\s+0\\s+1\\s+1\\s+0\\s+1m\\ds")
        .containsPattern("s1\\s+stats_q\\s+globex\\s+0\\s+0\\s+0\\s+0\\s+1\\s+-");

    Cli.Result j = Cli.run("queue", "stats", "stats_q", "-c", config, "--tenants", "--json");
    assertThat(j.code()).as(j.toString()).isZero();
    JsonNode q = new ObjectMapper().readTree(j.out()).get("queues").get(0);
    assertThat(q.get("pending").asLong()).isEqualTo(2);
    assertThat(q.get("dead").asLong()).isEqualTo(1);
    assertThat(q.get("oldest_due_age_ms").asLong()).isBetween(59_000L, 600_000L);
    assertThat(q.get("tenants").get(0).get("tenant").asText()).isEqualTo("acme");

    // Every queue, without a name; the broken one is noted, not counted.
    Cli.Result all = Cli.run("queue", "stats", "-c", config);
    assertThat(all.code()).as(all.toString()).isZero();
    assertThat(all.out()).contains("stats_q").contains("pause_q").doesNotContain("broken_q");
    assertThat(all.err()).contains("broken_q").contains("ack_wait");

    Cli.Result unknown = Cli.run("queue", "stats", "nope_q", "-c", config);
    assertThat(unknown.code()).isEqualTo(2);
    assertThat(unknown.err()).contains("no queue table named 'nope_q'");
    Cli.Result broken = Cli.run("queue", "stats", "broken_q", "-c", config);
    assertThat(broken.code()).isEqualTo(1);
  }

  @Test
  void listShowsValidityAndPauseSwitches() throws Exception {
    Cli.Result r = Cli.run("queue", "list", "-c", config);
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.out())
        .containsPattern("s1\\s+stats_q\\s+valid\\s+-\\s+max_attempts=3")
        .containsPattern("s1\\s+pause_q\\s+valid\\s+-\\s+\\(defaults\\)")
        .containsPattern("s1\\s+broken_q\\s+INVALID\\s+-\\s+.*'banana' is not a duration");
    JsonNode j =
        new ObjectMapper().readTree(Cli.run("queue", "list", "-c", config, "--json").out());
    assertThat(j.get("queues").findValuesAsText("queue"))
        .containsExactlyInAnyOrder("broken_q", "pause_q", "stats_q");
  }

  @Test
  void pauseStopsDispatchWithinADiscoveryRoundAndResumeRestartsIt() throws Exception {
    h.startManager();
    try {
      RawReceiver r = h.rawReceiver("pause_q", "p-1", 10);
      h.exec("INSERT INTO pause_q (order_id) VALUES (1)");
      Event first = r.events.poll(10, SECONDS);
      assertThat(first).isNotNull();
      r.ack(first);

      Cli.Result p = Cli.run("queue", "pause", "pause_q", "-c", config);
      assertThat(p.code()).as(p.toString()).isZero();
      assertThat(p.out()).contains("paused pause_q on shard s1");
      await()
          .atMost(10, SECONDS)
          .until(() -> h.server().engine().find("pause_q").orElseThrow().paused());
      assertThat(Cli.run("queue", "list", "-c", config).out())
          .containsPattern("pause_q\\s+valid\\s+paused");
      h.exec("INSERT INTO pause_q (order_id) VALUES (2)");
      // Paused: the event is due and a receiver has credits, yet nothing is sent.
      await()
          .during(1, SECONDS)
          .atMost(5, SECONDS)
          .until(() -> h.queryLong("SELECT COUNT(*) FROM pause_q WHERE state = 0") == 1);
      assertThat(r.events).isEmpty();

      Cli.Result resumed = Cli.run("queue", "resume", "pause_q", "-c", config, "--json");
      assertThat(resumed.code()).as(resumed.toString()).isZero();
      assertThat(new ObjectMapper().readTree(resumed.out()).get("paused").asBoolean()).isFalse();
      Event second = r.events.poll(10, SECONDS);
      assertThat(second).isNotNull();
      assertThat(second.getColumnsMap().get("order_id").getIntValue()).isEqualTo(2);
      r.ack(second);
    } finally {
      h.stopManager();
    }
    Cli.Result unknown = Cli.run("queue", "pause", "nope_q", "-c", config);
    assertThat(unknown.code()).isEqualTo(2);
    assertThat(Cli.run("queue", "pause", "-c", config).code()).isEqualTo(2);
  }
}
