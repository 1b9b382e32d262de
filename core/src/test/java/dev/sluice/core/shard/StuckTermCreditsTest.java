package dev.sluice.core.shard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Leadership is lost while a queue's thread is stuck in the database (its table locked by another
 * session, as when the server is slow to go down), and the outlet holds events up to its
 * max_in_flight. It stays subscribed into the engine's next term: the credits those events took
 * must come back once the stuck thread ends, or the outlet is sent nothing ever again.
 */
class StuckTermCreditsTest {
  static final int HELD = 3;

  @Test
  void creditsHeldByAnEndedTermComeBackWhenItsStuckThreadEnds() throws Exception {
    try (EngineHarness h =
        EngineHarness.fresh(StuckTermCreditsTest.class)
            .leaseTtl(Duration.ofSeconds(2))
            .leaseRenew(Duration.ofMillis(200))
            .start()) {
      h.queue(
          "held_q",
          List.of("`order_id` BIGINT NULL"),
          "sluice_queue poll_interval=50ms ack_wait=120s");
      ShardManager shard = h.shard();
      CollectingOutlet out = h.subscribe("held_q", HELD);
      for (int i = 0; i < HELD; i++) {
        h.db().exec("INSERT INTO held_q (order_id) VALUES (" + i + ")");
      }
      assertThat(out.take(HELD, 20_000)).as("held events").hasSize(HELD);
      // The outlet holds HELD events, never acked: its credits are all taken.

      try (Connection lock = h.db().connect();
          Statement s = lock.createStatement()) {
        s.execute("LOCK TABLES held_q WRITE");
        try {
          // (With the binlog followed and nothing new, the poller's next read is its safety poll,
          // within 5 s.)
          await().atMost(15, SECONDS).until(() -> waitingOnTable(h) > 0);
          h.db()
              .exec(
                  "UPDATE sluice_lease SET owner = 'usurper', token = token + 1,"
                      + " expires_ns = expires_ns + 600000000000 WHERE shard = 's1'");
          await().atMost(5, SECONDS).until(() -> !shard.leading());
          // The step-down waits 2 s for the queue's threads, then leaves the stuck poller to a
          // thread that gives the credits back when it ends.
          await().atMost(10, SECONDS).until(StuckTermCreditsTest::givingBackLate);
          assertThat(waitingOnTable(h)).as("the poller is still stuck").isGreaterThan(0);
          assertThat(out.inFlight.get()).as("credits wait for the stuck thread").isEqualTo(HELD);
        } finally {
          s.execute("UNLOCK TABLES");
        }
      }

      // The usurper goes away; this engine leads again, with the outlet still subscribed.
      h.db().exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1'");
      await().atMost(10, SECONDS).until(shard::leading);
      h.db().exec("INSERT INTO held_q (order_id) VALUES (100)");
      Delivery e = out.next(20_000);
      assertThat(e)
          .as("the outlet is sent the new term's event: its credits came back")
          .isNotNull();
      assertThat(h.queryLong("SELECT order_id FROM held_q WHERE id = ?", e.id())).isEqualTo(100);
      h.ack("held_q", out, e); // (the engine's stop need not wait for it)
    }
  }

  static long waitingOnTable(EngineHarness h) throws Exception {
    return h.queryLong(
        "SELECT COUNT(*) FROM information_schema.processlist WHERE db = DATABASE()"
            + " AND info LIKE '%held\\_q%' AND state LIKE 'Waiting for table%'");
  }

  /** Whether the ended term's queue waits, on a thread of its own, for its stuck thread to end. */
  static boolean givingBackLate() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals("sluice-s1-held_q-giveback") && t.isAlive());
  }
}
