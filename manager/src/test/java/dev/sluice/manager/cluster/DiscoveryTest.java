package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.ListQueuesRequest;
import dev.sluice.proto.v1.QueueInfo;
import dev.sluice.proto.v1.ReceiverMessage;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Queues come and go by migration; a malformed one is reported and skipped, the rest run on. */
class DiscoveryTest {
  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(DiscoveryTest.class);
    h.createQueue("good_q", "");
    h.createQueueWithComment("bad_q", "sluice_queue ack_wait=banana");
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

  @Test
  void malformedCommentDisablesOnlyThatQueueWithAClearMessage() throws Exception {
    assertThat(info("good_q").getStatus()).isEqualTo("SERVING");
    QueueInfo bad = info("bad_q");
    assertThat(bad.getStatus()).isEqualTo("DISABLED");
    assertThat(bad.getProblem())
        .contains("bad_q")
        .contains("ack_wait")
        .contains("'banana' is not a duration");
    assertThat(h.registry.get("sluice.queue.config.errors").counter().count())
        .isGreaterThanOrEqualTo(1);

    RawReceiver toBad = h.rawReceiver("bad_q", "r", 1);
    await().atMost(5, SECONDS).until(() -> toBad.error != null);
    assertThat(toBad.error.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(toBad.error.getDescription()).contains("ack_wait");

    RawReceiver good = h.rawReceiver("good_q", "r", 1);
    h.exec("INSERT INTO good_q (order_id) VALUES (1)");
    Event e = good.events.poll(10, TimeUnit.SECONDS);
    assertThat(e).isNotNull();
    good.ack(e);

    // Fixing the comment by migration brings the queue up without a restart.
    h.exec("ALTER TABLE bad_q COMMENT = 'sluice_queue ack_wait=5s'");
    // While discovery swaps the disabled entry for the started queue, every listing has it, once:
    // disabled until it is served, then serving.
    long end = System.nanoTime() + SECONDS.toNanos(10);
    String status = "DISABLED";
    while (!status.equals("SERVING") && System.nanoTime() < end) {
      List<QueueInfo> listed =
          h.blocking().listQueues(ListQueuesRequest.getDefaultInstance()).getQueuesList().stream()
              .filter(q -> q.getName().equals("bad_q"))
              .toList();
      assertThat(listed).as("bad_q in every listing, once").hasSize(1);
      status = listed.get(0).getStatus();
    }
    assertThat(status).isEqualTo("SERVING");
    assertThat(info("bad_q").getOptionsMap()).containsEntry("ack_wait", "5s");
  }

  @Test
  void newQueueByMigrationIsServedWithoutRestart() throws Exception {
    h.createQueue("late_q", "");
    await()
        .atMost(10, SECONDS)
        .until(() -> info("late_q") != null && info("late_q").getStatus().equals("SERVING"));
    h.exec("DROP TABLE late_q");
    await().atMost(10, SECONDS).until(() -> info("late_q") == null);
  }

  @Test
  void tableBreakingTheConventionIsDisabledNamingTheColumn() throws Exception {
    h.exec("CREATE TABLE broken_q (id BIGINT PRIMARY KEY, payload TEXT) COMMENT='sluice_queue'");
    await().atMost(10, SECONDS).until(() -> info("broken_q") != null);
    assertThat(info("broken_q").getStatus()).isEqualTo("DISABLED");
    assertThat(info("broken_q").getProblem())
        .contains("time_next: missing column")
        .contains("ALTER TABLE");
  }

  @Test
  void badSubscribeInputGetsClearErrors() {
    RawReceiver unknown = h.rawReceiver("no_such_queue", "r", 1);
    await().atMost(5, SECONDS).until(() -> unknown.error != null);
    assertThat(unknown.error.getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(unknown.error.getDescription()).contains("no_such_queue").contains("good_q");

    RawReceiver zero = h.rawReceiver("good_q", "r", 0);
    await().atMost(5, SECONDS).until(() -> zero.error != null);
    assertThat(zero.error.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(zero.error.getDescription()).contains("max_in_flight");

    RawReceiver noId = h.rawReceiver("good_q", "", 1);
    await().atMost(5, SECONDS).until(() -> noId.error != null);
    assertThat(noId.error.getDescription()).contains("receiver_id");

    RawReceiver twice = h.rawReceiver("good_q", "r", 1);
    await().atMost(5, SECONDS).until(() -> twice.subscribed);
    twice.send(
        ReceiverMessage.newBuilder()
            .setSubscribe(
                dev.sluice.proto.v1.Subscribe.newBuilder()
                    .setQueue("good_q")
                    .setReceiverId("r")
                    .setMaxInFlight(1))
            .build());
    await().atMost(5, SECONDS).until(() -> twice.error != null);
    assertThat(twice.error.getDescription()).contains("already subscribed");
    assertThat(List.of(unknown, zero, noId, twice)).allMatch(r -> r.all.isEmpty());
  }
}
