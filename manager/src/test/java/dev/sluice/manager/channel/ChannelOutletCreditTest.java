package dev.sluice.manager.channel;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletOutcomes;
import dev.sluice.db.store.EventRef;
import dev.sluice.manager.config.ChannelConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A channel's credits are its unconfirmed publishes (max_in_flight), also when the core gives a
 * credit back before the publish is answered (its ack deadline passed): the outlet opens no new
 * publish until the broker answered the old one, so a short ack deadline cannot multiply the
 * publishes in flight at the broker. Against a broker that accepts connections and never answers,
 * so that publishes stay pending for the whole publish timeout.
 */
class ChannelOutletCreditTest {

  @Test
  void creditsGivenBackWhilePublishesStillWaitOpenNoFurtherPublish() throws Exception {
    List<Socket> accepted = new CopyOnWriteArrayList<>();
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    accepted.add(silent.accept()); // and never a byte back
                  }
                } catch (IOException closed) {
                  // the test is over
                }
              },
              "silent-broker");
      acceptor.setDaemon(true);
      acceptor.start();
      ChannelConfig channel =
          new ChannelConfig(
              "k",
              ChannelConfig.Kind.KAFKA,
              "127.0.0.1:" + silent.getLocalPort(),
              null,
              null,
              Duration.ofSeconds(2),
              2,
              null);
      Outcomes outcomes = new Outcomes();
      try (ChannelPublisher publisher = ChannelOutlets.publisher(channel, "credit-test")) {
        ChannelOutlet outlet =
            new ChannelOutlet(
                new ChannelBinding("q", channel, "t", null, null, null, null, false),
                publisher,
                outcomes,
                new ChannelStats(new SimpleMeterRegistry(), "k", "q", "s1"),
                "q",
                "s1");
        assertThat(outlet.tryReserve("")).isTrue();
        assertThat(outlet.tryReserve("")).isTrue();
        outlet.deliver("s1", List.of(delivery(1), delivery(2)));
        // The core's ack deadline of both passed (an ack_wait shorter than the publish timeout):
        // it gives their credits back and would fire them again at once.
        outlet.unreserve("");
        outlet.unreserve("");
        assertThat(outlet.free()).as("credits free while 2 publishes wait").isZero();
        assertThat(outlet.tryReserve("")).isFalse();
        // Once the broker's silence failed them, the credits are free again (one: the probe of a
        // broker that is down).
        await().atMost(10, SECONDS).until(() -> outcomes.released.size() == 2);
        assertThat(outlet.free()).isEqualTo(1);
        assertThat(outlet.tryReserve("")).isTrue();
      }
    } finally {
      for (Socket s : accepted) {
        s.close();
      }
    }
  }

  static Delivery delivery(long id) {
    return new Delivery(
        "s1", "q", id, 1, "", 0, 0, 0, 0, "", List.of(), Map.of("payload", "p" + id));
  }

  /** What the outlet reported, as the queue would receive it. */
  static final class Outcomes implements OutletOutcomes {
    final List<EventRef> released = new CopyOnWriteArrayList<>();

    @Override
    public void acked(Outlet from, List<EventRef> refs) {}

    @Override
    public void committed(Outlet from, List<EventRef> refs) {}

    @Override
    public void nacked(Outlet from, List<Nack> nacks) {}

    @Override
    public void released(Outlet from, List<EventRef> refs, String why) {
      released.addAll(refs);
    }
  }
}
