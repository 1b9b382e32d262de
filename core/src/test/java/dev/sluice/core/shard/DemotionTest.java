package dev.sluice.core.shard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A shard whose lease is lost stops firing at once, in every queue — even while discovery holds the
 * shard's lock (the {@link ServedQueues} monitor: a round's apply step takes it, and restarts
 * queues under it). The lease keeper closes the term's gate before it waits for that lock to take
 * the queues out.
 */
class DemotionTest {
  @Test
  void aLostLeaseStopsEveryQueueOfTheShardAtOnceEvenDuringDiscovery() throws Exception {
    try (EngineHarness h =
        EngineHarness.fresh(DemotionTest.class)
            .leaseTtl(Duration.ofSeconds(2))
            .leaseRenew(Duration.ofMillis(200))
            .start()) {
      List<String> columns = List.of("`order_id` BIGINT NULL");
      h.queue("dem_a", columns, "sluice_queue poll_interval=50ms");
      h.queue("dem_b", columns, "sluice_queue poll_interval=50ms");
      CollectingOutlet a = h.subscribe("dem_a", 100);
      CollectingOutlet b = h.subscribe("dem_b", 100);
      h.db().exec("INSERT INTO dem_a (order_id) VALUES (0)");
      h.db().exec("INSERT INTO dem_b (order_id) VALUES (0)");
      Delivery da = a.next(20_000);
      Delivery db = b.next(20_000);
      assertThat(da).isNotNull();
      assertThat(db).isNotNull();
      h.ack("dem_a", a, da);
      h.ack("dem_b", b, db);
      ShardManager shard = h.shard();
      Object lock = shard.lockForTests();
      Thread keeper = thread("sluice-" + EngineHarness.SHARD + "-lease");

      // Discovery is busy (the test holds the shard's lock, as a long discovery round does) when
      // another manager takes the lease over.
      CompletableFuture<Void> round;
      synchronized (lock) {
        round = CompletableFuture.runAsync(shard::discover);
        h.db()
            .exec(
                "UPDATE sluice_lease SET owner = 'usurper', token = token + 1,"
                    + " expires_ns = expires_ns + 600000000000 WHERE shard = 's1'");
        // The keeper finds out at its next renewal (every 200 ms): it closes the gate, then waits
        // for the shard's lock to take the queues out.
        await().atMost(3, SECONDS).until(() -> blockedOn(keeper, lock));
        h.db().exec("INSERT INTO dem_a (order_id) VALUES (1)");
        h.db().exec("INSERT INTO dem_b (order_id) VALUES (1)");
        await()
            .during(Duration.ofSeconds(1))
            .atMost(Duration.ofSeconds(3))
            .until(
                () ->
                    h.queryLong("SELECT COUNT(*) FROM dem_a WHERE state <> 0 AND order_id = 1")
                            + h.queryLong(
                                "SELECT COUNT(*) FROM dem_b WHERE state <> 0 AND order_id = 1")
                        == 0);
        // The lock is the shard's: the step-down and the discovery round both wait for it.
        assertThat(shard.leading()).as("the queues are taken out only under the lock").isTrue();
        assertThat(round).as("a discovery round waits for the lock").isNotDone();
      }
      await().atMost(10, SECONDS).until(() -> !shard.leading());
      round.get(10, SECONDS);
      assertThat(a.got).isEmpty();
      assertThat(b.got).isEmpty();
    }
  }

  /** The live thread named {@code name}. */
  static Thread thread(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals(name) && t.isAlive())
        .findFirst()
        .orElseThrow(() -> new AssertionError("no thread " + name));
  }

  /** Whether {@code t} is blocked entering {@code monitor}. */
  static boolean blockedOn(Thread t, Object monitor) {
    ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(t.getId());
    return info != null
        && info.getThreadState() == Thread.State.BLOCKED
        && info.getLockInfo() != null
        && info.getLockInfo().getIdentityHashCode() == System.identityHashCode(monitor);
  }
}
