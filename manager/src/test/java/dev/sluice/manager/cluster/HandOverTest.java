package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.RawReceiver;
import dev.sluice.manager.SluiceServer;
import dev.sluice.proto.v1.Event;
import io.grpc.ManagedChannel;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Planned hand-overs leave no gap: a manager seeks leases only once its gRPC server listens, and a
 * manager stopping gracefully frees its leases before it drains what its receivers hold.
 */
class HandOverTest {
  @Test
  void aStoppingLeaderFreesTheShardBeforeItsReceiversFinish() throws Exception {
    List<ManagedChannel> channels = new ArrayList<>();
    try (Cluster c = new Cluster(HandOverTest.class, List.of("-"))) {
      c.createQueue("hand_q", "ack_wait=1m");
      // A long drain (the old leader waits up to 10 s for its receiver's acks) and a long lease:
      // a lease left to lapse would keep the shard from b for 20 s.
      SluiceServer a =
          c.startManager(
              c.configBuilder("a")
                  .shutdownTimeout(Duration.ofSeconds(20))
                  .leaseTtl(Duration.ofSeconds(20))
                  .build());
      await().atMost(10, SECONDS).until(() -> Cluster.leading(a) == 1);
      SluiceServer b =
          c.startManager(c.configBuilder("b").leaseTtl(Duration.ofSeconds(20)).build());
      RawReceiver ra = LeadershipTest.raw(a, "hand_q", "ra", 10, channels);
      RawReceiver rb = LeadershipTest.raw(b, "hand_q", "rb", 10, channels);
      await().atMost(5, SECONDS).until(() -> ra.subscribed && rb.subscribed);
      c.insert(0, "hand_q", 1);
      Event held = ra.events.poll(10, SECONDS);
      assertThat(held).as("delivered by the leader").isNotNull();

      Thread stopper = new Thread(a::stop, "test-stop-a");
      stopper.start();
      // While a still waits for its receiver, b already serves the shard.
      await().atMost(5, SECONDS).until(() -> Cluster.leading(b) == 1);
      c.insert(0, "hand_q", 1);
      Event next = rb.events.poll(5, SECONDS);
      assertThat(next).as("a new event delivered by the new leader").isNotNull();
      assertThat(stopper.isAlive()).as("the old leader is still draining").isTrue();

      ra.ack(held); // the old leader's receiver finishes; its ack applies through the CAS
      rb.ack(next);
      stopper.join(20_000);
      await()
          .atMost(10, SECONDS)
          .until(() -> c.queryLong(0, "SELECT COUNT(*) FROM hand_q WHERE state = 2") == 2);
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }

  @Test
  void noLeaseIsTakenBeforeTheGrpcServerListens() throws Exception {
    try (Cluster c = new Cluster(HandOverTest.class, List.of("-"));
        ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      c.createQueue("early_q", "");
      // The gRPC port is taken: this manager never listens, so it must never lead.
      assertThatThrownBy(
              () -> c.startManager(c.configBuilder("x").grpcPort(taken.getLocalPort()).build()))
          .hasMessageContaining("cannot listen");
      assertThat(c.queryLong(0, "SELECT COUNT(*) FROM sluice_lease WHERE token > 0"))
          .as("leases ever taken")
          .isZero();
    }
  }
}
