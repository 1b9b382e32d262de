package dev.sluice.core.loop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.QueueConvention;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The database clock is the reference ({@link DbClock}): an engine whose host clock runs ten
 * minutes fast still never fires early, and one running ten minutes slow is not ten minutes late.
 */
class ClockSkewTest {
  @Test
  void engineClockAheadNeverFiresEarly() throws Exception {
    runWithSkew(Duration.ofMinutes(10));
  }

  @Test
  void engineClockBehindStillFiresOnTime() throws Exception {
    runWithSkew(Duration.ofMinutes(-10));
  }

  private void runWithSkew(Duration skew) throws Exception {
    try (EngineHarness h =
        EngineHarness.fresh(ClockSkewTest.class)
            .clock(Clock.offset(Clock.systemUTC(), skew))
            .start()) {
      h.queue("skew_q", List.of("`order_id` BIGINT NULL"), "sluice_queue poll_interval=50ms");
      CollectingOutlet out = h.subscribe("skew_q", 50);
      // One event due now first: the queue is polling and its clock measured before the test's.
      h.db().exec("INSERT INTO skew_q (order_id) VALUES (-1)");
      Delivery warm = out.next(20_000);
      assertThat(warm).as("an event due now").isNotNull();
      h.ack("skew_q", out, warm);
      try (Connection c = h.db().connect()) {
        for (int i = 0; i < 10; i++) {
          EventProducer.insert(
              c,
              "skew_q",
              Map.of("order_id", (long) i),
              EventOptions.builder().delay(Duration.ofMillis(300 + 100L * i)).build());
        }
      }
      for (int i = 0; i < 10; i++) {
        Delivery d = out.next(20_000);
        assertThat(d).as("event %d delivered", i).isNotNull();
        long dbNow = h.queryLong("SELECT " + QueueConvention.NOW_NS_SQL);
        assertThat(dbNow)
            .as("delivered at or after its due time")
            .isGreaterThanOrEqualTo(d.dueNs());
        assertThat(d.firedNs()).isGreaterThanOrEqualTo(d.dueNs());
        h.ack("skew_q", out, d);
      }
    }
  }
}
