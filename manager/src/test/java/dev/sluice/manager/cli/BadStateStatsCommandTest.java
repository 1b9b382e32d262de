package dev.sluice.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.manager.Harness;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Finding 1 of the containment work: rows whose state is none of Sluice's (set by hand), and a
 * state column declared TINYINT(1), which Connector/J reads as a Boolean unless told otherwise.
 * {@code sluice queue stats} counts them as OTHER and goes on with every queue.
 */
class BadStateStatsCommandTest {
  static Harness h;
  @TempDir static Path dir;
  static String config;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(BadStateStatsCommandTest.class);
    h.createQueue("odd_q", "");
    h.createQueue("bool_q", "");
    h.exec("ALTER TABLE bool_q MODIFY `state` TINYINT(1) NOT NULL DEFAULT 0");
    for (String q : new String[] {"odd_q", "bool_q"}) {
      h.exec("INSERT INTO " + q + " (order_id, state) VALUES (1, 0), (2, 2), (3, 9), (4, 3)");
    }
    config = Cli.config(dir, h).toString();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void statsShowUnknownStatesAsOtherAndExitZero() throws Exception {
    Cli.Result r = Cli.run("queue", "stats", "-c", config);
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.out())
        .containsPattern("s1\\s+odd_q\\s+1\\s+0\\s+1\\s+1\\s+0\\s+\\S+\\s+1")
        .containsPattern("s1\\s+bool_q\\s+1\\s+0\\s+1\\s+1\\s+0\\s+\\S+\\s+1");
    Cli.Result j = Cli.run("queue", "stats", "bool_q", "-c", config, "--json", "--tenants");
    assertThat(j.code()).as(j.toString()).isZero();
    JsonNode q = new ObjectMapper().readTree(j.out()).get("queues").get(0);
    assertThat(q.get("other").asLong()).isEqualTo(1);
    assertThat(q.get("acked").asLong()).isEqualTo(1);
    assertThat(q.get("dead").asLong()).isEqualTo(1);
    assertThat(q.get("tenants").get(0).get("other").asLong()).isEqualTo(1);
  }
}
