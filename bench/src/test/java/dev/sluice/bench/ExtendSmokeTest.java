package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Runs {@code extend} end to end with tiny sizes and checks its figures line, and that no extension
 * was refused. A smoke test of the harness, not a measurement: it must stay fast.
 */
class ExtendSmokeTest {

  @Test
  void extendPrintsItsFiguresLine() {
    String printed = BenchRun.of("extend", "--events", "40", "--receivers", "2").printed();
    String line = new BenchRun(printed).lastLine();
    assertThat(line)
        .matches(
            "extend: events=40 extensions=40 seconds=\\d+\\.\\d\\d"
                + " statements_per_extension=-?\\d+\\.\\d\\d updates_per_extension=-?\\d+\\.\\d\\d"
                + " commits_per_extension=-?\\d+\\.\\d\\d selects_per_extension=-?\\d+\\.\\d\\d");
    assertThat(printed).doesNotContain("extensions refused");
  }
}
