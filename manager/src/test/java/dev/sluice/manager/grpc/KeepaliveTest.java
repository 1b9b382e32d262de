package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.FreezableProxy;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A receiver host that vanishes (no FIN, no RST: its packets simply stop) is found by the manager's
 * keepalive pings, and its events are released within seconds instead of after ack_wait.
 */
class KeepaliveTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(KeepaliveTest.class);
    h.startManager(
        h.configBuilder().grpcKeepaliveTimeout(Duration.ofMillis(500)).build(), Clock.systemUTC());
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void aVanishedReceiverHostReleasesItsEventsWithinSeconds() throws Exception {
    h.createQueue("ka_q", "ack_wait=60s min_backoff=10ms max_backoff=20ms");
    await().atMost(10, SECONDS).until(() -> h.server().engine().find("ka_q").isPresent());
    FreezableProxy proxy = h.closeLater(new FreezableProxy(h.server().port()));
    ManagedChannel ch = NettyChannelBuilder.forTarget(proxy.target()).usePlaintext().build();
    h.closeLater(() -> ch.shutdownNow().awaitTermination(2, TimeUnit.SECONDS));
    RawReceiver gone = h.closeLater(new RawReceiver(SluiceGrpc.newStub(ch), "ka_q", "gone", 10));
    for (int i = 0; i < 3; i++) {
      h.exec("INSERT INTO ka_q (order_id) VALUES (" + i + ")");
    }
    await().atMost(10, SECONDS).until(() -> gone.all.size() == 3);
    proxy.freeze();
    // Another receiver gets them once the manager has given up on the vanished one (a ping after
    // 10 s of silence, unanswered for 0.5 s): well within ack_wait (60 s).
    RawReceiver other = h.rawReceiver("ka_q", "other", 10);
    await().atMost(25, SECONDS).until(() -> other.all.size() >= 3);
    assertThat(other.all).allMatch(e -> e.getEpoch() == 2);
  }
}
