package dev.sluice.core.queue.poll;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The poll's mode: its hold, the metric, and at most one INFO line a minute. */
class PollModeTest {
  static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
  static final long S = TimeUnit.SECONDS.toNanos(1);

  final Counter switches = new SimpleMeterRegistry().counter("sluice.poll.mode.switches");
  final PollMode mode = new PollMode("queue q on shard s", switches);

  @Test
  void perTenantRoundsLastAtLeastTheirHoldThoughNoTenantIsAtItsShare() {
    mode.enter(0, "a tenant holds its full share of the window");
    assertThat(mode.perTenant()).isTrue();
    assertThat(mode.mayLeave(20 * MS)).as("a round 20 ms later may not end the mode").isFalse();
    assertThat(mode.mayLeave(999 * MS)).isFalse();
    assertThat(mode.mayLeave(S)).isTrue();
    mode.leave(S);
    assertThat(mode.perTenant()).isFalse();
    assertThat(switches.count()).isEqualTo(2);
  }

  /**
   * What a restarted manager facing one tenant's backlog did: every round (20 ms) found no tenant
   * at its share, and the next single poll found one again. 40 s of that switched 26 times a second
   * and logged 294 lines; with the hold it switches a few times and logs one line.
   */
  @Test
  void aBacklogThatKeepsBringingTheModeBackSwitchesRarelyAndLogsOnceAMinute() {
    long now = 0;
    long end = 40 * S;
    while (now < end) {
      mode.enter(now, "a tenant holds its full share of the window");
      while (!mode.mayLeave(now) && now < end) {
        now += 20 * MS; // a round every 20 ms, each finding no tenant at its share
      }
      if (mode.mayLeave(now)) {
        mode.leave(now);
      }
      now += 20 * MS; // the next single poll is capped again
    }
    // Holds of 1, 2, 4, 8, 16 and 30 s: six entries and five exits in the 40 s, not 1,040.
    assertThat(switches.count()).isEqualTo(11);
    assertThat(mode.hold()).isEqualTo(PollMode.MAX_HOLD_NS);
    assertThat(mode.logged()).as("INFO lines in 40 s").isEqualTo(1);
  }

  @Test
  void aCalmStartAfterTheLastExitHasTheShortHoldAgain() {
    mode.enter(0, "first");
    mode.leave(S);
    mode.enter(S + 20 * MS, "again at once");
    assertThat(mode.hold()).isEqualTo(2 * S);
    mode.leave(4 * S);
    mode.enter(4 * S + PollMode.REENTRY_NS, "long after");
    assertThat(mode.hold()).isEqualTo(PollMode.MIN_HOLD_NS);
  }

  @Test
  void aSwitchAMinuteAfterTheLastLoggedOneIsLoggedAgain() {
    mode.enter(0, "first");
    mode.leave(S);
    mode.enter(2 * S, "second");
    assertThat(mode.logged()).isEqualTo(1);
    mode.leave(70 * S);
    assertThat(mode.logged()).isEqualTo(2);
    assertThat(switches.count()).isEqualTo(4);
  }
}
