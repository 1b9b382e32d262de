package dev.sluice.manager;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.db.QueueConvention;
import dev.sluice.proto.v1.Event;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The database clock is the reference: a manager whose own clock runs ten minutes fast still never
 * fires early, and one running ten minutes slow is not ten minutes late.
 */
class ClockSkewTest {
  @Test
  void managerClockAheadNeverFiresEarly() throws Exception {
    runWithSkew(Duration.ofMinutes(10));
  }

  @Test
  void managerClockBehindStillFiresOnTime() throws Exception {
    runWithSkew(Duration.ofMinutes(-10));
  }

  private void runWithSkew(Duration skew) throws Exception {
    try (Harness h = new Harness(ClockSkewTest.class)) {
      h.createQueue("skew_q", "poll_interval=50ms");
      h.startManager(Clock.offset(Clock.systemUTC(), skew));
      RawReceiver r = h.rawReceiver("skew_q", "r", 50);
      List<Long> dues = new ArrayList<>();
      try (Connection c = h.connect()) {
        for (int i = 0; i < 10; i++) {
          long id =
              EventProducer.insert(
                  c,
                  "skew_q",
                  Map.of("order_id", (long) i),
                  EventOptions.builder().delay(Duration.ofMillis(300 + 100L * i)).build());
          dues.add(id);
        }
      }
      for (int i = 0; i < 10; i++) {
        Event e = r.events.poll(20, TimeUnit.SECONDS);
        assertThat(e).as("event %d delivered", i).isNotNull();
        long dbNow = h.queryLong("SELECT " + QueueConvention.NOW_NS_SQL);
        assertThat(dbNow)
            .as("delivered at or after its due time")
            .isGreaterThanOrEqualTo(e.getTimeDueNs());
        assertThat(e.getTimeFiredNs()).isGreaterThanOrEqualTo(e.getTimeDueNs());
        r.ack(e);
      }
    }
  }
}
