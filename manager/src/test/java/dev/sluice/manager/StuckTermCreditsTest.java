package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.shard.ShardManager;
import dev.sluice.proto.v1.Event;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Leadership is lost while a queue's thread is stuck in the database (its table locked by another
 * session, as when the server is slow to go down), and the receiver holds events up to its
 * max_in_flight. Its stream carries on into the manager's next term: the credits those events took
 * must come back once the stuck thread ends, or the receiver is sent nothing ever again.
 */
class StuckTermCreditsTest {
  static final int HELD = 3;

  @Test
  void creditsHeldByAnEndedTermComeBackWhenItsStuckThreadEnds() throws Exception {
    try (Harness h = new Harness(StuckTermCreditsTest.class)) {
      h.createQueue("held_q", "poll_interval=50ms ack_wait=120s");
      h.startManager(
          h.configBuilder()
              .leaseTtl(Duration.ofSeconds(2))
              .leaseRenew(Duration.ofMillis(200))
              .build(),
          Clock.systemUTC());
      ShardManager shard = h.server().engine().shards().get(0);
      RawReceiver r = h.rawReceiver("held_q", "holder", HELD);
      for (int i = 0; i < HELD; i++) {
        h.exec("INSERT INTO held_q (order_id) VALUES (" + i + ")");
      }
      for (int i = 0; i < HELD; i++) {
        assertThat(r.events.poll(20, SECONDS)).as("held event %d", i).isNotNull();
      }
      // The receiver holds HELD events, never acked: its credits are all taken.

      try (Connection lock = h.connect();
          Statement s = lock.createStatement()) {
        s.execute("LOCK TABLES held_q WRITE");
        try {
          // (With the binlog followed and nothing new, the poller's next read is its safety poll,
          // within 5 s.)
          await().atMost(15, SECONDS).until(() -> waitingOnTable(h) > 0);
          h.exec(
              "UPDATE sluice_lease SET owner = 'usurper', token = token + 1,"
                  + " expires_ns = expires_ns + 600000000000 WHERE shard = 's1'");
          await().atMost(5, SECONDS).until(() -> !shard.leading());
          // The step-down waits 2 s for the queue's threads; the poller stays stuck through it and
          // after it (checked all along, not once at the end).
          await()
              .during(Duration.ofSeconds(3))
              .atMost(5, SECONDS)
              .until(() -> waitingOnTable(h) > 0);
        } finally {
          s.execute("UNLOCK TABLES");
        }
      }

      // The usurper goes away; this manager leads again, with the receiver still connected.
      h.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1'");
      await().atMost(10, SECONDS).until(shard::leading);
      h.exec("INSERT INTO held_q (order_id) VALUES (100)");
      Event e = r.events.poll(20, SECONDS);
      assertThat(e)
          .as("the receiver is sent the new term's event: its credits came back")
          .isNotNull();
      assertThat(h.queryLong("SELECT order_id FROM held_q WHERE id = ?", e.getId())).isEqualTo(100);
    }
  }

  static long waitingOnTable(Harness h) throws Exception {
    return h.queryLong(
        "SELECT COUNT(*) FROM information_schema.processlist WHERE db = DATABASE()"
            + " AND info LIKE '%held\\_q%' AND state LIKE 'Waiting for table%'");
  }
}
