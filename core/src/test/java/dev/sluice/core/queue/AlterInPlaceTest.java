package dev.sluice.core.queue;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Settled;
import dev.sluice.db.store.CasOutcome;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A migration of a served queue (a new column, a new ack_wait) is followed in place: the events an
 * outlet holds stay in flight, their acks apply, and nothing is delivered twice.
 */
class AlterInPlaceTest {
  static EngineHarness h;

  @BeforeAll
  static void start() {
    h = EngineHarness.fresh(AlterInPlaceTest.class).managerId("alter-test").start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void alterTableKeepsEventsInFlightAndTheirAcks() throws Exception {
    h.queue("alter_q", List.of("`order_id` BIGINT NULL"), "sluice_queue ack_wait=30s");
    CollectingOutlet out = h.subscribe("alter_q", 20);
    for (int i = 1; i <= 5; i++) {
      h.db().exec("INSERT INTO alter_q (order_id) VALUES (" + i + ")");
    }
    List<Delivery> held = out.take(5, 10_000);
    assertThat(held).as("the 5 events delivered").hasSize(5);

    h.db().exec("ALTER TABLE alter_q ADD COLUMN note VARCHAR(20) NULL");
    h.db().exec("ALTER TABLE alter_q COMMENT = 'sluice_queue ack_wait=45s'");
    await()
        .atMost(10, SECONDS)
        .until(
            () ->
                h.engine()
                    .find("alter_q")
                    .orElseThrow()
                    .table()
                    .options()
                    .ackWait()
                    .equals(Duration.ofSeconds(45)));

    // The new column travels with later events.
    h.db().exec("INSERT INTO alter_q (order_id, note) VALUES (6, 'hello')");
    Delivery later = out.next(10_000);
    assertThat(later).as("an event inserted after the ALTER").isNotNull();
    assertThat(later.columns()).containsEntry("note", "hello");
    h.ack("alter_q", out, later);

    for (Delivery d : held) {
      h.ack("alter_q", out, d);
    }
    await().atMost(10, SECONDS).until(() -> out.settled.size() >= 6);
    assertThat(out.settled)
        .as("acks of events fired before the ALTER")
        .extracting(Settled::outcome)
        .containsOnly(CasOutcome.APPLIED);
    assertThat(h.queryLong("SELECT COUNT(*) FROM alter_q WHERE state = 2")).isEqualTo(6);
    assertThat(out.all).extracting(Delivery::id).doesNotHaveDuplicates().hasSize(6);
  }
}
