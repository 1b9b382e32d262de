package dev.sluice.db.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Which occurrences one pass inserts, on time and after a downtime, under each catch-up policy. */
class OccurrencesTest {
  static final long S = 1_000_000_000L;
  static final long MIN = 60 * S;
  static final Recurrence EVERY_MINUTE = Recurrence.every(Duration.ofMinutes(1));
  static final long NOW = 1_000_000 * S;
  static final long AHEAD = 2 * S;
  static final long GRACE = 60 * S;

  @Test
  void onTimeTheOccurrencesDueWithinTheLookAheadAreInserted() {
    Occurrences p = Occurrences.plan(EVERY_MINUTE, CatchUp.NONE, NOW + S, NOW, AHEAD, GRACE);
    assertThat(p.times()).containsExactly(NOW + S);
    assertThat(p.next()).isEqualTo(NOW + S + MIN);
    assertThat(p.skipped()).isFalse();
    // Late, but within the grace (a failover): inserted, whatever the policy.
    p = Occurrences.plan(EVERY_MINUTE, CatchUp.NONE, NOW - 30 * S, NOW, AHEAD, GRACE);
    assertThat(p.times()).containsExactly(NOW - 30 * S);
  }

  @Test
  void afterADowntimeAllInsertsEachMissedOccurrence() {
    long next = NOW - 60 * MIN;
    Occurrences p = Occurrences.plan(EVERY_MINUTE, CatchUp.ALL, next, NOW, AHEAD, GRACE);
    assertThat(p.times()).hasSize(61).startsWith(next).endsWith(NOW);
    assertThat(p.next()).isEqualTo(NOW + MIN);
    assertThat(p.skipped()).isFalse();
  }

  @Test
  void allIsCappedAndSkipsTheRest() {
    Recurrence everySecond = Recurrence.every(Duration.ofSeconds(1));
    long next = NOW - 3600 * S;
    Occurrences p = Occurrences.plan(everySecond, CatchUp.ALL, next, NOW, AHEAD, GRACE);
    assertThat(p.times()).hasSize(Occurrences.MAX_CATCH_UP).startsWith(next);
    assertThat(p.skipped()).isTrue();
    assertThat(p.skippedFrom()).isEqualTo(next + 1000 * S);
    assertThat(p.skippedTo()).isEqualTo(NOW - GRACE - S);
    assertThat(p.next()).isEqualTo(NOW - GRACE);
  }

  @Test
  void oneInsertsTheLatestMissedOccurrenceOnly() {
    long next = NOW - 60 * MIN;
    Occurrences p = Occurrences.plan(EVERY_MINUTE, CatchUp.ONE, next, NOW, AHEAD, GRACE);
    // The missed ones are those before NOW - 60 s: one stands for them, then NOW - 60 s is on time.
    assertThat(p.times()).containsExactly(NOW - 2 * MIN, NOW - MIN, NOW);
    assertThat(p.skippedFrom()).isEqualTo(next);
    assertThat(p.skippedTo()).isEqualTo(NOW - 3 * MIN);
    assertThat(p.next()).isEqualTo(NOW + MIN);
  }

  @Test
  void noneSkipsEveryMissedOccurrence() {
    long next = NOW - 60 * MIN;
    Occurrences p = Occurrences.plan(EVERY_MINUTE, CatchUp.NONE, next, NOW, AHEAD, GRACE);
    assertThat(p.times()).containsExactly(NOW - MIN, NOW);
    assertThat(p.skippedFrom()).isEqualTo(next);
    assertThat(p.skippedTo()).isEqualTo(NOW - 2 * MIN);
  }
}
