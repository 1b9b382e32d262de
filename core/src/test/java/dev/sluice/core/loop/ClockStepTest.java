package dev.sluice.core.loop;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Settled;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.CasOutcome;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The host clock stepping forward (an NTP correction, a VM resumed, an operator's {@code date -s})
 * must not make anything fire early nor time out a healthy outlet: elapsed time is measured on the
 * monotonic ticker, the time of day comes from the database ({@link DbClock}).
 */
class ClockStepTest {
  private static final List<String> COLUMNS = List.of("`order_id` BIGINT NULL");

  /** The system clock, plus steps: once armed, every read steps it {@code step} further ahead. */
  static final class SteppingClock extends Clock {
    final AtomicLong offsetNs = new AtomicLong();
    volatile long stepNs;

    @Override
    public Instant instant() {
      long off = offsetNs.addAndGet(stepNs);
      return Clock.systemUTC().instant().plusNanos(off);
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }
  }

  @Test
  void aHostClockSteppingForwardNeverFiresEarly() throws Exception {
    SteppingClock clock = new SteppingClock();
    try (EngineHarness h = EngineHarness.fresh(ClockStepTest.class).clock(clock).start()) {
      h.queue("step_q", COLUMNS, "sluice_queue poll_interval=50ms");
      CollectingOutlet out = h.subscribe("step_q", 50);
      try (Connection c = h.db().connect()) {
        for (int i = 0; i < 5; i++) {
          EventProducer.insert(
              c,
              "step_q",
              Map.of("order_id", (long) i),
              EventOptions.builder().delay(Duration.ofMillis(1500 + 200L * i)).build());
        }
      }
      clock.stepNs = Duration.ofSeconds(1).toNanos(); // the host clock runs away from now on
      for (int i = 0; i < 5; i++) {
        Delivery d = out.next(20_000);
        assertThat(d).as("event %d delivered", i).isNotNull();
        long dbNow = h.queryLong("SELECT " + QueueConvention.NOW_NS_SQL);
        assertThat(dbNow)
            .as("event %d delivered at or after its due time (db clock)", i)
            .isGreaterThanOrEqualTo(d.dueNs());
        h.ack("step_q", out, d);
      }
    }
  }

  @Test
  void aHostClockSteppingForwardDoesNotTimeOutAHealthyOutlet() throws Exception {
    SteppingClock clock = new SteppingClock();
    try (EngineHarness h = EngineHarness.fresh(ClockStepTest.class).clock(clock).start()) {
      h.queue("hold_q", COLUMNS, "sluice_queue poll_interval=50ms ack_wait=30s min_backoff=100ms");
      CollectingOutlet out = h.subscribe("hold_q", 50);
      h.db().exec("INSERT INTO hold_q (order_id) VALUES (1)");
      Delivery e = out.next(20_000);
      assertThat(e).isNotNull();

      clock.offsetNs.addAndGet(Duration.ofHours(1).toNanos()); // the host clock steps an hour on
      // The outlet is healthy and still has 30 s: nothing comes back meanwhile.
      await()
          .during(Duration.ofSeconds(2))
          .atMost(Duration.ofSeconds(5))
          .until(() -> out.got.isEmpty() && out.settled.isEmpty());
      h.ack("hold_q", out, e);
      await().atMost(10, SECONDS).until(() -> !out.settled.isEmpty());
      assertThat(out.settled.get(0).outcome()).isEqualTo(CasOutcome.APPLIED);
      assertThat(out.settled.get(0).result()).isEqualTo(Settled.Result.ACKED);
      assertThat(h.queryLong("SELECT state FROM hold_q WHERE id = ?", e.id()))
          .as("acked")
          .isEqualTo(2); // pending 0, fired 1, acked 2
    }
  }
}
