package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs {@code drain} end to end with a tiny N — every peer, the real manager and receivers — and
 * checks the figures line. A smoke test of the harness, not a measurement: it must stay fast.
 */
class DrainSmokeTest {

  @Test
  void drainPrintsOneLineOfFiguresForEveryPeer() {
    List<String> args = new ArrayList<>(List.of("drain", "--events", "500"));
    String printed = BenchRun.of(args.toArray(String[]::new)).printed();
    assertThat(new BenchRun(printed).lastLine())
        .matches(
            "drain: sluice=\\d+/s db_scheduler=\\d+/s floor=\\d+/s ratio=\\d+\\.\\d\\d"
                + " floor_ratio=\\d+\\.\\d\\d");
    assertThat(printed).contains("sluice: statements per event:");
  }

  @Test
  void drainWithGroupsComparesGroupedAndPlain() {
    // On earlier versions' group index (the default, (group_key), is every other grouped run's).
    List<String> args =
        new ArrayList<>(
            List.of("drain", "--events", "500", "--groups", "--group-index", "key-state"));
    String printed = BenchRun.of(args.toArray(String[]::new)).printed();
    assertThat(new BenchRun(printed).lastLine())
        .matches(
            "groups: grouped=\\d+/s plain=\\d+/s ratio=\\d+\\.\\d\\d completion_lag_p50_ms=\\d+"
                + " completion_lag_p99_ms=\\d+ \\(grouped: 500 children in groups of 100 on"
                + " \\(group_key, state\\), counted without their 5 completions, clocked to the last completion's ack; completion"
                + " lag: from a group's last child ack to its completion, by the database's"
                + " clock\\)");
    assertThat(printed).contains("grouped: a completion's lag after its group's last child");
  }
}
