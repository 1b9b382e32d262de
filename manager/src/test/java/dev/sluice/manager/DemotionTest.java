package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.shard.ShardManager;
import dev.sluice.proto.v1.Event;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A shard whose lease is lost stops firing at once, in every queue — even while discovery holds the
 * shard manager's lock (it makes database calls and restarts queues under it).
 */
class DemotionTest {
  @Test
  void aLostLeaseStopsEveryQueueOfTheShardAtOnceEvenDuringDiscovery() throws Exception {
    try (Harness h = new Harness(DemotionTest.class)) {
      h.createQueue("dem_a", "poll_interval=50ms");
      h.createQueue("dem_b", "poll_interval=50ms");
      h.startManager(
          h.configBuilder()
              .leaseTtl(Duration.ofSeconds(2))
              .leaseRenew(Duration.ofMillis(200))
              .build(),
          Clock.systemUTC());
      RawReceiver a = h.rawReceiver("dem_a", "ra", 100);
      RawReceiver b = h.rawReceiver("dem_b", "rb", 100);
      h.exec("INSERT INTO dem_a (order_id) VALUES (0)");
      h.exec("INSERT INTO dem_b (order_id) VALUES (0)");
      Event ea = a.events.poll(20, SECONDS);
      Event eb = b.events.poll(20, SECONDS);
      assertThat(ea).isNotNull();
      assertThat(eb).isNotNull();
      a.ack(ea);
      b.ack(eb);
      ShardManager shard = h.server().engine().shards().get(0);

      // Discovery is busy (the test holds the shard manager's lock, as a long discovery does)
      // when another manager takes the lease over.
      synchronized (shard) {
        h.exec(
            "UPDATE sluice_lease SET owner = 'usurper', token = token + 1,"
                + " expires_ns = expires_ns + 600000000000 WHERE shard = 's1'");
        // The keeper finds out at its next renewal (every 200 ms) and the shard stops leading.
        await().atMost(Duration.ofSeconds(3)).until(() -> !shard.leading());
        h.exec("INSERT INTO dem_a (order_id) VALUES (1)");
        h.exec("INSERT INTO dem_b (order_id) VALUES (1)");
        await()
            .during(Duration.ofSeconds(1))
            .atMost(Duration.ofSeconds(3))
            .until(
                () ->
                    h.queryLong("SELECT COUNT(*) FROM dem_a WHERE state <> 0 AND order_id = 1")
                            + h.queryLong(
                                "SELECT COUNT(*) FROM dem_b WHERE state <> 0 AND order_id = 1")
                        == 0);
      }
      await().atMost(10, SECONDS).until(() -> !shard.leading());
      assertThat(a.events).isEmpty();
      assertThat(b.events).isEmpty();
    }
  }
}
