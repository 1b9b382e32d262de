package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.DataSources;
import dev.sluice.db.store.JdbcLeaseStore;
import dev.sluice.proto.v1.Event;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A leader is deposed (another manager took its lease) while acks of its receivers are on their way
 * to the table. The leader's own writes are fenced and refused now; but an ack is a compare-and-set
 * on the epoch the receiver was given, right whoever writes it. The acks it had queued must be
 * written through the unfenced path, as a graceful stop writes them, not dropped: else every event
 * they acked is delivered again after its ack deadline.
 */
class DeposedAcksTest {
  @Test
  void acksQueuedWhenTheLeaderIsDeposedAreWrittenNotDropped() throws Exception {
    try (Harness h = new Harness(DeposedAcksTest.class)) {
      h.createQueue("deposed_q", "poll_interval=50ms ack_wait=60s");
      // Renewals far apart: the leader learns of the takeover from its refused ack write.
      h.startManager(
          h.configBuilder()
              .leaseTtl(Duration.ofSeconds(30))
              .leaseRenew(Duration.ofSeconds(10))
              .build(),
          Clock.systemUTC());
      ShardManager shard = h.server().engine().shards().get(0);
      await().atMost(10, SECONDS).until(shard::leading);

      RawReceiver r = h.rawReceiver("deposed_q", "r", 2);
      h.exec("INSERT INTO deposed_q (order_id) VALUES (1), (2)");
      Event first = r.events.poll(20, SECONDS);
      Event second = r.events.poll(20, SECONDS);
      assertThat(first).isNotNull();
      assertThat(second).isNotNull();

      // Another manager takes the lease, for longer than this test.
      h.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1'");
      try (HikariDataSource ds =
          DataSources.pool("intruder", h.url(), h.db.user(), h.db.password(), 1)) {
        assertThat(
                new JdbcLeaseStore(ds)
                    .acquire("s1", "intruder", Duration.ofSeconds(120).toNanos())
                    .held())
            .isTrue();
      }
      assertThat(shard.leading()).as("the leader has not noticed yet").isTrue();

      // The receiver acks what it was given: the deposed leader's queue takes the acks.
      r.ack(first);
      r.ack(second);
      await().atMost(10, SECONDS).until(() -> !shard.leading());
      await()
          .atMost(10, SECONDS)
          .untilAsserted(
              () ->
                  assertThat(h.queryLong("SELECT COUNT(*) FROM deposed_q WHERE state = 2"))
                      .as("rows acked (not left fired, to be delivered again)")
                      .isEqualTo(2));
    }
  }
}
