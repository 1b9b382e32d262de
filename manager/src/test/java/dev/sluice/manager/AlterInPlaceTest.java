package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.proto.v1.AckResult;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.ListQueuesRequest;
import dev.sluice.proto.v1.QueueInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A migration of a served queue (a new column, a new ack_wait) is followed in place: the events a
 * receiver holds stay in flight, its acks apply, and nothing is delivered twice.
 */
class AlterInPlaceTest {
  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(AlterInPlaceTest.class);
    h.createQueue("alter_q", "ack_wait=30s");
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
  void alterTableKeepsEventsInFlightAndTheirAcks() throws Exception {
    RawReceiver r = h.rawReceiver("alter_q", "holder", 20);
    await().atMost(10, SECONDS).until(() -> r.subscribed);
    for (int i = 1; i <= 5; i++) {
      h.exec("INSERT INTO alter_q (order_id) VALUES (" + i + ")");
    }
    List<Event> held = new ArrayList<>();
    while (held.size() < 5) {
      Event e = r.events.poll(10, TimeUnit.SECONDS);
      assertThat(e).as("event %s of 5 delivered", held.size() + 1).isNotNull();
      held.add(e);
    }

    h.exec("ALTER TABLE alter_q ADD COLUMN note VARCHAR(20) NULL");
    h.exec("ALTER TABLE alter_q COMMENT = 'sluice_queue ack_wait=45s'");
    await()
        .atMost(10, SECONDS)
        .until(() -> "45s".equals(info("alter_q").getOptionsMap().get("ack_wait")));

    // The new column travels with later events.
    h.exec("INSERT INTO alter_q (order_id, note) VALUES (6, 'hello')");
    Event later = r.events.poll(10, TimeUnit.SECONDS);
    assertThat(later).as("an event inserted after the ALTER").isNotNull();
    assertThat(later.getColumnsMap().get("note").getStringValue()).isEqualTo("hello");
    r.ack(later);

    for (Event e : held) {
      r.ack(e);
    }
    await().atMost(10, SECONDS).until(() -> r.results.size() >= 6);
    assertThat(r.results)
        .as("acks of events fired before the ALTER")
        .extracting(AckResult::getStatus)
        .containsOnly(AckStatus.ACK_STATUS_OK);
    assertThat(h.queryLong("SELECT COUNT(*) FROM alter_q WHERE state = 2")).isEqualTo(6);
    assertThat(r.all).extracting(Event::getId).doesNotHaveDuplicates().hasSize(6);
  }
}
