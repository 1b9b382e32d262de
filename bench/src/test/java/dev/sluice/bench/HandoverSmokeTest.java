package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs {@code handover} end to end for one round — two managers, two shards, a graceful stop and a
 * restart — and checks the figures line. A smoke test of the harness, not a measurement.
 */
class HandoverSmokeTest {

  @Test
  void oneRoundPrintsThePausesOfBothHandOvers() {
    List<String> args = new ArrayList<>(List.of("handover", "--rounds", "1", "--rate", "200"));
    String printed = BenchRun.of(args.toArray(String[]::new)).printed();
    assertThat(new BenchRun(printed).lastLine())
        .matches(
            "handover: rounds=1 stop_pause_ms=\\d+/\\d+/\\d+ takeback_pause_ms=\\d+/\\d+/\\d+"
                + " steady_gap_ms=\\d+");
  }
}
