package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.MINUTES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.receiver.SluiceReceiver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * 50,000 events and four healthy receivers (the real SDK over loopback gRPC): every event is
 * delivered exactly once — no duplicates under backlog for healthy receivers — and ends acked.
 */
class ExactlyOnceTest {
  static final int EVENTS = 50_000;

  @Test
  void backlogIsDeliveredExactlyOnceToHealthyReceivers() throws Exception {
    try (Harness h = new Harness(ExactlyOnceTest.class)) {
      h.createQueue("once_q", "ack_wait=60s cache_size=5000");
      for (int chunk = 0; chunk < EVENTS / 5000; chunk++) {
        StringBuilder sb = new StringBuilder("INSERT INTO once_q (order_id) VALUES ");
        for (int i = 0; i < 5000; i++) {
          sb.append(i == 0 ? "" : ",").append("(").append(chunk * 5000 + i).append(")");
        }
        h.exec(sb.toString());
      }
      h.startManager();
      ConcurrentHashMap<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
      AtomicLong deliveries = new AtomicLong();
      List<SluiceReceiver> receivers = new ArrayList<>();
      for (int r = 0; r < 4; r++) {
        receivers.add(
            h.closeLater(
                SluiceReceiver.builder()
                    .target(h.target())
                    .queue("once_q")
                    .receiverId("healthy-" + r)
                    .concurrency(4)
                    .maxInFlight(64)
                    .handler(
                        e -> {
                          deliveries.incrementAndGet();
                          seen.computeIfAbsent(e.id(), k -> new AtomicInteger()).incrementAndGet();
                        })
                    .build()
                    .start()));
      }
      await()
          .atMost(5, MINUTES)
          .pollInterval(Duration.ofMillis(500))
          .until(() -> h.queryLong("SELECT COUNT(*) FROM once_q WHERE state = 2") == EVENTS);
      assertThat(seen).hasSize(EVENTS);
      assertThat(deliveries.get()).as("no duplicates").isEqualTo(EVENTS);
      assertThat(seen.values()).allMatch(c -> c.get() == 1);
      assertThat(h.queryLong("SELECT MAX(epoch) FROM once_q")).isEqualTo(1);
      // Every receiver took part (least-loaded assignment spreads the work).
      assertThat(receivers).allMatch(r -> r.stats().received() > 0);
      for (SluiceReceiver r : receivers) {
        r.close();
      }
    }
  }
}
