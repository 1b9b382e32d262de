package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

/**
 * A graceful stop lets receivers finish, then releases what they still hold back to pending at once
 * — not after ack_wait — and tells receivers to go elsewhere.
 */
class GracefulStopTest {
  @Test
  void stopReleasesHeldEventsAndClosesStreams() throws Exception {
    try (Harness h = new Harness(GracefulStopTest.class)) {
      h.createQueue("stop_q", "ack_wait=10m");
      h.exec("INSERT INTO stop_q (order_id) VALUES (1),(2),(3),(4),(5)");
      h.startManager();
      RawReceiver r = h.rawReceiver("stop_q", "slow", 10);
      await().atMost(10, SECONDS).until(() -> r.all.size() == 5);
      r.ack(r.all.get(0));
      await().atMost(5, SECONDS).until(() -> r.results.size() == 1);
      h.stopManager();
      assertThat(h.queryLong("SELECT COUNT(*) FROM stop_q WHERE state = 0")).isEqualTo(4);
      assertThat(h.queryLong("SELECT COUNT(*) FROM stop_q WHERE state = 2")).isEqualTo(1);
      await().atMost(5, SECONDS).until(() -> r.error != null);
      assertThat(r.error.getCode()).isEqualTo(Status.Code.UNAVAILABLE);

      h.startManager();
      RawReceiver again = h.rawReceiver("stop_q", "slow", 10);
      await().atMost(10, SECONDS).until(() -> again.all.size() == 4);
    }
  }
}
