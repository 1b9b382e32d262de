package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.manager.SluiceServer;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Event;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.testkit.EmbeddedServer;
import dev.sluice.testkit.TestDatabases;
import io.grpc.ManagedChannel;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The database restarts under a running manager and receiver, with events in flight: both carry on
 * by themselves once it is back (no restart, no operator action), and nothing is lost.
 *
 * <p>Restarts the embedded server every test class of this JVM shares; the classes run one after
 * the other, and the server keeps its data. Skipped against {@code SLUICE_TEST_JDBC_URL}: there is
 * no embedded server to restart.
 */
class DatabaseRestartTest {
  static final int BEFORE = 300;
  static final int AFTER = 100;

  @Test
  void managerAndReceiverCarryOnAcrossARestartAndLoseNothing() throws Exception {
    try (Harness h = new Harness(DatabaseRestartTest.class)) {
      EmbeddedServer server = TestDatabases.embedded();
      assumeTrue(server != null, "tests run against SLUICE_TEST_JDBC_URL: no server to restart");
      h.createQueue("restart_q", "ack_wait=3s min_backoff=100ms max_backoff=500ms");
      SluiceServer manager = h.startManager();
      await().atMost(10, SECONDS).until(() -> manager.engine().shards().get(0).leading());
      insert(h, 0, BEFORE);

      Map<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
      SluiceReceiver receiver =
          h.closeLater(
              SluiceReceiver.builder()
                  .target(h.target())
                  .queue("restart_q")
                  .receiverId("survivor")
                  .concurrency(4)
                  .maxInFlight(16)
                  .reconnectBackoff(Duration.ofMillis(100), Duration.ofSeconds(1))
                  .handler(
                      e -> {
                        seen.computeIfAbsent(e.getLong("order_id"), k -> new AtomicInteger())
                            .incrementAndGet();
                        // The handler's work time, not a wait: some are in flight when the
                        // server goes.
                        Thread.sleep(10);
                      })
                  .build()
                  .start());
      await().atMost(30, SECONDS).until(() -> seen.size() >= BEFORE / 3);

      long t0 = System.nanoTime();
      server.restartServer();
      long downMs = (System.nanoTime() - t0) / 1_000_000;

      // New events after the restart, through a new connection as an application would.
      await().atMost(30, SECONDS).ignoreExceptions().until(() -> insert(h, BEFORE, AFTER));
      await()
          .atMost(60, SECONDS)
          .until(
              () ->
                  h.queryLong("SELECT COUNT(*) FROM restart_q WHERE state = 2") == BEFORE + AFTER);
      assertThat(seen).as("every event reached the handler").hasSize(BEFORE + AFTER);
      assertThat(h.queryLong("SELECT COUNT(*) FROM restart_q WHERE state <> 2")).isZero();
      assertThat(manager.engine().shards().get(0).leading())
          .as("the manager leads its shard again (the server was down %d ms)", downMs)
          .isTrue();
      if (EmbeddedServer.binlogOn()) {
        // The binlog follower connected again, to the restarted server's current position.
        await()
            .atMost(30, SECONDS)
            .until(() -> manager.engine().shards().get(0).binlog().following());
      }
      assertThat(receiver.stats().streamsConnected()).isEqualTo(1);
    }
  }

  /**
   * An ack that reaches a manager not leading the shard is applied straight through the CAS. If the
   * database is down for longer than the pool waits for a connection (5 s), that write fails: it
   * must be retried until the database is back, not end the receiver's stream (which would release
   * everything the receiver holds from every shard of that manager).
   */
  @Test
  void anAckThroughAStandbyOutlastsALongOutage() throws Exception {
    List<ManagedChannel> channels = new ArrayList<>();
    try (Cluster c = new Cluster(DatabaseRestartTest.class, List.of("-"))) {
      EmbeddedServer server = TestDatabases.embedded();
      assumeTrue(server != null, "tests run against SLUICE_TEST_JDBC_URL: no server to stop");
      c.createQueue("outage_q", "ack_wait=60s");
      SluiceServer leader = c.startManager("leader");
      await().atMost(10, SECONDS).until(() -> Cluster.leading(leader) == 1);
      SluiceServer standby = c.startManager("standby");
      RawReceiver fromLeader = LeadershipTest.raw(leader, "outage_q", "r", 10, channels);
      RawReceiver viaStandby = LeadershipTest.raw(standby, "outage_q", "r", 10, channels);
      await().atMost(5, SECONDS).until(() -> fromLeader.subscribed && viaStandby.subscribed);
      c.insert(0, "outage_q", 1);
      Event e = fromLeader.events.poll(10, SECONDS);
      assertThat(e).isNotNull();

      server.stopServer();
      try {
        viaStandby.ack(e); // the receiver's stream to the leader is gone, say
        // Through 7 s of outage (checked all along): the stream to the standby is intact.
        await("the stream to the standby is intact")
            .during(7, SECONDS)
            .atMost(8, SECONDS)
            .until(() -> viaStandby.error == null);
      } finally {
        server.restartServer();
      }
      await().atMost(30, SECONDS).until(() -> viaStandby.results.size() == 1);
      assertThat(viaStandby.results.get(0).getStatus()).isEqualTo(AckStatus.ACK_STATUS_OK);
      assertThat(viaStandby.error).isNull();
      assertThat(c.queryLong(0, "SELECT state FROM outage_q")).isEqualTo(2);
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }

  /** Inserts order ids from..from+count-1 in one statement; true when it committed. */
  private static boolean insert(Harness h, int from, int count) throws SQLException {
    StringBuilder sb = new StringBuilder("INSERT INTO restart_q (order_id) VALUES ");
    for (int i = 0; i < count; i++) {
      sb.append(i == 0 ? "" : ",").append("(").append(from + i).append(")");
    }
    h.exec(sb.toString());
    return true;
  }
}
