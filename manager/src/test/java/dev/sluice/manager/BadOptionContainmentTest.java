package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.ListQueuesRequest;
import dev.sluice.proto.v1.QueueInfo;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A comment whose value overflows or exceeds an option's bound disables that one table, naming the
 * table, option, value and limit; every other queue of the shard is still discovered and served,
 * also after a manager restart.
 */
class BadOptionContainmentTest {
  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(BadOptionContainmentTest.class);
    h.createQueue("good_q", "");
    h.createQueueWithComment("huge_q", "sluice_queue ack_wait=999999999999999d");
    h.createQueueWithComment("long_q", "sluice_queue ack_wait=100000d");
    h.createQueueWithComment("cache_q", "sluice_queue cache_size=2000000000");
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static QueueInfo info(String name) {
    return h.blocking().listQueues(ListQueuesRequest.getDefaultInstance()).getQueuesList().stream()
        .filter(q -> q.getName().equals(name))
        .findFirst()
        .orElse(null);
  }

  static void delivers(String queue, long orderId) throws Exception {
    RawReceiver r = h.rawReceiver(queue, "r-" + queue + "-" + orderId, 1);
    await().atMost(10, SECONDS).until(() -> r.subscribed);
    h.exec("INSERT INTO " + queue + " (order_id) VALUES (" + orderId + ")");
    Event e = r.events.poll(10, TimeUnit.SECONDS);
    assertThat(e).as("an event of " + queue + " is delivered").isNotNull();
    r.ack(e);
    r.close();
  }

  @Test
  void overflowingAndOutOfBoundOptionsDisableOnlyTheirTable() throws Exception {
    await().atMost(10, SECONDS).until(() -> info("good_q") != null);
    assertThat(info("good_q").getStatus()).isEqualTo("SERVING");
    assertThat(info("huge_q").getStatus()).isEqualTo("DISABLED");
    assertThat(info("huge_q").getProblem())
        .contains("huge_q")
        .contains("ack_wait")
        .contains("999999999999999d")
        .contains("at most 1d");
    assertThat(info("long_q").getStatus()).isEqualTo("DISABLED");
    assertThat(info("long_q").getProblem())
        .contains("long_q")
        .contains("ack_wait=100000d")
        .contains("at most 1d");
    assertThat(info("cache_q").getProblem())
        .contains("cache_size=2000000000")
        .contains("at most 1000000");
    assertThat(h.registry.get("sluice.queues.disabled").gauge().value()).isEqualTo(3.0);
    String status =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(h.httpBase() + "/api/status")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertThat(status)
        .contains("\"queue\":\"huge_q\"")
        .contains("ack_wait=999999999999999d is too large: at most 1d");
    assertThat(h.registry.get("sluice.queue.config.errors").counter().count())
        .isGreaterThanOrEqualTo(3);
    delivers("good_q", 1);

    // A queue created after the bad ones is found and served.
    h.createQueue("late_q", "");
    await()
        .atMost(10, SECONDS)
        .until(() -> info("late_q") != null && "SERVING".equals(info("late_q").getStatus()));
    delivers("late_q", 2);

    // And after a restart, every good queue of the shard is served again.
    h.stopManager();
    h.startManager();
    await()
        .atMost(10, SECONDS)
        .until(() -> info("late_q") != null && "SERVING".equals(info("late_q").getStatus()));
    assertThat(info("good_q").getStatus()).isEqualTo("SERVING");
    assertThat(info("huge_q").getStatus()).isEqualTo("DISABLED");
    delivers("good_q", 3);
  }
}
