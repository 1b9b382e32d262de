package dev.sluice.manager.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.db.store.StateCounts;
import org.junit.jupiter.api.Test;

/** Counting rows by state reads every row: it comes less often as the table grows. */
class StateSamplerTest {
  static final long EVERY_MS = 5_000;

  static StateCounts rows(long pending, long acked) {
    return new StateCounts(pending, 3, acked, 1, 0, 0);
  }

  @Test
  void aSmallTableIsCountedAtEverySample() {
    assertThat(StateSampler.nextCountAtMs(100_000, EVERY_MS, rows(40, 40_000))).isEqualTo(105_000);
  }

  @Test
  void aLargeTableIsCountedASecondPerTenThousandRows() {
    // A 200,000-event backlog: every 20 s, not every 5 s.
    assertThat(StateSampler.nextCountAtMs(100_000, EVERY_MS, rows(199_996, 0))).isEqualTo(120_000);
    // Ten million rows of acked history: every 1,000 s, not a scan without pause.
    assertThat(StateSampler.nextCountAtMs(100_000, EVERY_MS, rows(0, 9_999_996)))
        .isEqualTo(1_100_000);
  }
}
