package dev.sluice.manager;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.db.QueueConvention;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Event;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The host clock stepping forward (an NTP correction, a VM resumed, an operator's {@code date -s})
 * must not make anything fire early nor time out a healthy receiver: elapsed time is measured on
 * the monotonic clock, the time of day comes from the database.
 */
class ClockStepTest {
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
    try (Harness h = new Harness(ClockStepTest.class)) {
      h.createQueue("step_q", "poll_interval=50ms");
      SteppingClock clock = new SteppingClock();
      h.startManager(clock);
      RawReceiver r = h.rawReceiver("step_q", "r", 50);
      await().atMost(10, SECONDS).until(() -> r.subscribed);
      try (Connection c = h.connect()) {
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
        Event e = r.events.poll(20, SECONDS);
        assertThat(e).as("event %d delivered", i).isNotNull();
        long dbNow = h.queryLong("SELECT " + QueueConvention.NOW_NS_SQL);
        assertThat(dbNow)
            .as("event %d delivered at or after its due time (db clock)", i)
            .isGreaterThanOrEqualTo(e.getTimeDueNs());
        r.ack(e);
      }
    }
  }

  @Test
  void aHostClockSteppingForwardDoesNotTimeOutAHealthyReceiver() throws Exception {
    try (Harness h = new Harness(ClockStepTest.class)) {
      h.createQueue("hold_q", "poll_interval=50ms ack_wait=30s min_backoff=100ms");
      SteppingClock clock = new SteppingClock();
      h.startManager(clock);
      RawReceiver r = h.rawReceiver("hold_q", "r", 50);
      h.exec("INSERT INTO hold_q (order_id) VALUES (1)");
      Event e = r.events.poll(20, SECONDS);
      assertThat(e).isNotNull();

      clock.offsetNs.addAndGet(Duration.ofHours(1).toNanos()); // the host clock steps an hour on
      // The receiver is healthy and still has 30 s: nothing comes back meanwhile.
      await()
          .during(Duration.ofSeconds(2))
          .atMost(Duration.ofSeconds(5))
          .until(() -> r.events.isEmpty());
      r.ack(e);
      await().atMost(10, SECONDS).until(() -> !r.results.isEmpty());
      assertThat(r.results.get(0).getStatus()).isEqualTo(AckStatus.ACK_STATUS_OK);
      assertThat(h.queryLong("SELECT state FROM hold_q WHERE id = ?", e.getId()))
          .as("acked")
          .isEqualTo(2); // pending 0, fired 1, acked 2
    }
  }
}
