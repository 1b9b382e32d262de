package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.QueueColumns;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Event;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.receiver.Snooze;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Snooze over the receiver protocol and from the SDK, against a real manager and table: a snoozed
 * event comes back after its delay without spending an attempt (so it outlives max_attempts of
 * snoozes), each delivery a new epoch, and a late answer to a snoozed attempt changes nothing.
 */
class SnoozeTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(SnoozeTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  /** A served queue with the {@code snoozes} column (or without it). */
  static void createQueue(String name, boolean snoozes, String options) throws Exception {
    h.exec(
        QueueConvention.createTableSql(
            name,
            snoozes
                ? List.of("`order_id` BIGINT NULL", QueueColumns.SNOOZES_DEFINITION)
                : List.of("`order_id` BIGINT NULL"),
            "sluice_queue " + options));
    await().atMost(10, SECONDS).until(() -> h.server().engine().find(name).isPresent());
  }

  static long insert(String queue) throws Exception {
    h.exec("INSERT INTO " + queue + " (order_id) VALUES (1)");
    return h.queryLong("SELECT MAX(id) FROM " + queue);
  }

  @Test
  void snoozesOutliveMaxAttemptsAndALateAckOfASnoozedAttemptIsStale() throws Exception {
    createQueue("snz_raw", true, "max_attempts=2 min_backoff=10ms max_backoff=20ms");
    RawReceiver r = h.rawReceiver("snz_raw", "snoozer", 1);
    long id = insert("snz_raw");
    Event first = null;
    for (int i = 1; i <= 3; i++) {
      Event e = r.events.poll(30, SECONDS);
      assertThat(e).as("delivery %d", i).isNotNull();
      assertThat(e.getEpoch()).as("each delivery a new epoch").isEqualTo(i);
      if (first == null) {
        first = e;
      }
      r.snooze(e, 100);
    }
    Event fourth = r.events.poll(30, SECONDS);
    assertThat(fourth).as("delivered after 3 snoozes with max_attempts=2").isNotNull();
    assertThat(h.queryLong("SELECT snoozes FROM snz_raw WHERE id = ?", id)).isEqualTo(3);

    r.results.clear();
    r.ack(first);
    await().atMost(10, SECONDS).until(() -> !r.results.isEmpty());
    assertThat(r.results.get(0).getStatus())
        .as("the snoozed attempt's ack")
        .isEqualTo(AckStatus.ACK_STATUS_STALE);
    assertThat(h.queryLong("SELECT state FROM snz_raw WHERE id = ?", id)).isEqualTo(1);

    r.ack(fourth);
    await()
        .atMost(10, SECONDS)
        .until(() -> h.queryLong("SELECT state FROM snz_raw WHERE id = ?", id) == 2);
  }

  @Test
  void aHandlerThatThrowsSnoozeGetsTheEventAgainWithoutSpendingItsAttempts() throws Exception {
    assertThat(handledAfterSnoozes("snz_sdk", true)).as("acked, not dead").isEqualTo(2);
    assertThat(h.queryLong("SELECT MAX(snoozes) FROM snz_sdk")).isEqualTo(4);
    // The same handler on a table without the column: each snooze spends an attempt.
    assertThat(handledAfterSnoozes("snz_sdk_nocol", false)).as("dead").isEqualTo(3);
  }

  /** The final state of one event whose handler snoozes it 4 times, then returns. */
  private static long handledAfterSnoozes(String queue, boolean column) throws Exception {
    createQueue(queue, column, "max_attempts=2 min_backoff=10ms max_backoff=20ms");
    AtomicInteger deliveries = new AtomicInteger();
    try (SluiceReceiver r =
        SluiceReceiver.builder()
            .target(h.target())
            .queue(queue)
            .receiverId(queue + "-r")
            .handler(
                ev -> {
                  if (deliveries.incrementAndGet() <= 4) {
                    throw new Snooze(Duration.ofMillis(50), "not yet");
                  }
                })
            .build()
            .start()) {
      assertThat(r.awaitSubscribed(Duration.ofSeconds(30))).isTrue();
      long id = insert(queue);
      await()
          .atMost(30, SECONDS)
          .until(() -> h.queryLong("SELECT state FROM " + queue + " WHERE id = ?", id) >= 2);
      return h.queryLong("SELECT state FROM " + queue + " WHERE id = ?", id);
    }
  }
}
