package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the receiver protocol carries between a receiver and a real manager, field by field. What
 * the engine does with an ack, a nack or a cancel is core's (queue.EventLifeTest, BadRowsTest);
 * here, that the wire's fields reach it and come back as the protocol says.
 */
class ReceiverProtocolTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(ReceiverProtocolTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static long insert(String queue, long orderId) throws Exception {
    h.exec("INSERT INTO " + queue + " (order_id) VALUES (" + orderId + ")");
    return h.queryLong("SELECT MAX(id) FROM " + queue);
  }

  /** A nack's retry_after_ms of Long.MAX_VALUE is held at a day, never wrapped to "at once". */
  @Test
  void aHugeRetryAfterMsIsHeldAtADayNotWrapped() throws Exception {
    h.createServedQueue("wire_retry", "ack_wait=30s min_backoff=10ms max_backoff=20ms");
    RawReceiver r = h.rawReceiver("wire_retry", "r1", 10);
    long id = insert("wire_retry", 1);
    Event e = r.events.poll(10, SECONDS);
    assertThat(e).isNotNull();
    r.nack(e, Long.MAX_VALUE);
    await()
        .atMost(10, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM wire_retry WHERE id = ?", id) == 0);
    long now = h.queryLong("SELECT " + QueueConvention.NOW_NS_SQL);
    long next = h.queryLong("SELECT time_next FROM wire_retry WHERE id = ?", id);
    assertThat(next - now).as("retried no sooner than a day").isGreaterThan(23 * 3600_000_000_000L);
  }
}
