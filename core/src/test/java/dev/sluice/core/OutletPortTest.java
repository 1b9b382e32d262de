package dev.sluice.core;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.Settled;
import dev.sluice.db.KeyRange;
import dev.sluice.db.store.EventRef;
import dev.sluice.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The core with no transport at all: a plain Java {@link Outlet} attached to a real queue on a real
 * database gets due events as plain values, and its acks, nacks and releases change the rows
 * through the CAS on epoch, with the queue's one retry policy.
 */
public class OutletPortTest {
  static EngineHarness harness;
  static TestDatabase db;
  static QueueEngine engine;

  @BeforeAll
  static void start() {
    harness = EngineHarness.fresh(OutletPortTest.class).managerId("core-test").start();
    db = harness.db();
    engine = harness.engine();
  }

  @AfterAll
  static void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  static void queue(String name, String options) throws Exception {
    harness.queue(
        name,
        List.of("`order_id` BIGINT NULL", "`note` VARCHAR(64) NULL"),
        "sluice_queue " + options);
  }

  static long insert(String queue, long orderId) throws Exception {
    try (Connection c = db.connect()) {
      return EventProducer.insert(c, queue, Map.of("order_id", orderId, "note", "n" + orderId));
    }
  }

  static int[] stateAndEpoch(String queue, long id) throws Exception {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT state, epoch FROM " + queue + " WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new int[] {rs.getInt(1), rs.getInt(2)};
      }
    }
  }

  static String deadReason(String queue, long id) throws Exception {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT reason FROM sluice_dead_reason WHERE queue = ? AND id = ?")) {
      ps.setString(1, queue);
      ps.setLong(2, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  @Test
  void anOutletGetsPlainValuesAndItsAckMakesTheRowAcked() throws Exception {
    queue("port_ack", "ack_wait=30s");
    CollectingOutlet out = new CollectingOutlet(10);
    engine.subscribe(out, "port_ack", KeyRange.ALL);
    long id = insert("port_ack", 42);
    Delivery d = out.got.poll(10, SECONDS);
    assertThat(d).isNotNull();
    assertThat(d.id()).isEqualTo(id);
    assertThat(d.epoch()).isEqualTo(1);
    assertThat(d.queue()).isEqualTo("port_ack");
    assertThat(d.shard()).isEqualTo("s1");
    assertThat(d.columns()).containsEntry("order_id", 42L).containsEntry("note", "n42");
    assertThat(stateAndEpoch("port_ack", id)).containsExactly(1, 1); // fired at epoch 1
    engine.outcomes("port_ack", "s1").acked(out, List.of(new EventRef(id, 1)));
    await().atMost(5, SECONDS).until(() -> stateAndEpoch("port_ack", id)[0] == 2);
    await().atMost(5, SECONDS).until(() -> !out.settled.isEmpty());
    assertThat(out.settled.get(0).result()).isEqualTo(Settled.Result.ACKED);
    await().atMost(5, SECONDS).until(() -> out.inFlight.get() == 0);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void nacksRetryWithBackoffAndTheLastOneIsDeadWithTheOutletsReason() throws Exception {
    queue("port_nack", "max_attempts=2 min_backoff=100ms max_backoff=200ms");
    CollectingOutlet out = new CollectingOutlet(10);
    engine.subscribe(out, "port_nack", KeyRange.ALL);
    long id = insert("port_nack", 1);
    Delivery first = out.got.poll(10, SECONDS);
    engine
        .outcomes("port_nack", "s1")
        .nacked(out, List.of(new Nack(new EventRef(id, first.epoch()), 0, "broker said no")));
    Delivery second = out.got.poll(10, SECONDS);
    assertThat(second).isNotNull();
    assertThat(second.epoch()).isEqualTo(2);
    engine
        .outcomes("port_nack", "s1")
        .nacked(out, List.of(new Nack(new EventRef(id, 2), 0, "broker said no again")));
    await().atMost(5, SECONDS).until(() -> stateAndEpoch("port_nack", id)[0] == 3);
    assertThat(deadReason("port_nack", id))
        .isEqualTo("max_attempts 2 reached; last attempt: nack: broker said no again");
    engine.unsubscribe(out, "test over");
  }

  @Test
  void aReleaseComesBackAtOnceAndNeverKillsTheEvent() throws Exception {
    queue("port_release", "max_attempts=1 min_backoff=1h max_backoff=1h");
    CollectingOutlet out = new CollectingOutlet(10);
    engine.subscribe(out, "port_release", KeyRange.ALL);
    long id = insert("port_release", 1);
    Delivery first = out.got.poll(10, SECONDS);
    // Its only attempt: a nack would make it dead, a release (the broker is down) must not.
    engine
        .outcomes("port_release", "s1")
        .released(out, List.of(new EventRef(id, first.epoch())), "broker down");
    Delivery again = out.got.poll(10, SECONDS);
    assertThat(again).isNotNull();
    assertThat(again.id()).isEqualTo(id);
    assertThat(again.epoch()).as("the release undid the fire: the same attempt again").isEqualTo(1);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void releasesSpendNoAttemptSoTheEventLivesForItsFullMaxAttempts() throws Exception {
    queue("port_release_n", "max_attempts=2 min_backoff=100ms max_backoff=200ms");
    CollectingOutlet out = new CollectingOutlet(10);
    engine.subscribe(out, "port_release_n", KeyRange.ALL);
    long id = insert("port_release_n", 1);
    // Given back three times by the outlet, unsent (a broker that is down, say): no attempt spent.
    for (int i = 0; i < 3; i++) {
      Delivery d = out.got.poll(10, SECONDS);
      assertThat(d).as("delivery %d", i + 1).isNotNull();
      engine
          .outcomes("port_release_n", "s1")
          .released(out, List.of(new EventRef(id, d.epoch())), "broker down");
    }
    // Its first real attempt fails: with max_attempts=2 it must be tried once more, not dead.
    Delivery tried = out.got.poll(10, SECONDS);
    assertThat(tried).isNotNull();
    engine
        .outcomes("port_release_n", "s1")
        .nacked(out, List.of(new Nack(new EventRef(id, tried.epoch()), 0, "failed once")));
    Delivery last = out.got.poll(10, SECONDS);
    assertThat(last)
        .as(
            "delivered again after 3 releases and 1 nack with max_attempts=2 (state, epoch now: %s)",
            java.util.Arrays.toString(stateAndEpoch("port_release_n", id)))
        .isNotNull();
    assertThat(tried.epoch()).as("the attempt the nack answered was its first").isEqualTo(1);
    assertThat(last.epoch()).isEqualTo(2);
    engine.outcomes("port_release_n", "s1").acked(out, List.of(new EventRef(id, 2)));
    await().atMost(5, SECONDS).until(() -> stateAndEpoch("port_release_n", id)[0] == 2);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void anOutletThatTakesTheEventAndGoesAwaySpendsAnAttempt() throws Exception {
    queue("port_gone", "max_attempts=2 min_backoff=100ms max_backoff=200ms");
    long id = insert("port_gone", 1);
    // A receiver that crashes on the event (its stream breaks) twice: a poison event must die.
    for (int i = 1; i <= 2; i++) {
      CollectingOutlet out = new CollectingOutlet(10);
      engine.subscribe(out, "port_gone", KeyRange.ALL);
      Delivery d = out.got.poll(10, SECONDS);
      assertThat(d).as("delivery %d", i).isNotNull();
      assertThat(d.epoch()).isEqualTo(i);
      engine.unsubscribe(out, "stream broke");
    }
    await().atMost(5, SECONDS).until(() -> stateAndEpoch("port_gone", id)[0] == 3);
    assertThat(deadReason("port_gone", id))
        .isEqualTo("max_attempts 2 reached; last attempt: stream broke");
  }

  @Test
  void noMoreThanTheOutletsCreditsAreInFlight() throws Exception {
    queue("port_credits", "ack_wait=30s");
    CollectingOutlet out = new CollectingOutlet(3);
    engine.subscribe(out, "port_credits", KeyRange.ALL);
    for (int i = 0; i < 10; i++) {
      insert("port_credits", i);
    }
    await().atMost(10, SECONDS).until(() -> out.got.size() == 3);
    // The dispatcher has time to send more, and must not.
    await()
        .during(300, java.util.concurrent.TimeUnit.MILLISECONDS)
        .atMost(2, SECONDS)
        .until(() -> out.got.size() == 3);
    Delivery d = out.got.poll();
    engine.outcomes("port_credits", "s1").acked(out, List.of(new EventRef(d.id(), d.epoch())));
    await().atMost(10, SECONDS).until(() -> out.got.size() == 3);
    engine.unsubscribe(out, "test over");
  }
}
