package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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
    String external = System.getenv(TestDatabases.ENV_URL);
    if (external != null && !external.isBlank()) {
      args.addAll(List.of("--jdbc-url", external.trim()));
    }
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out = System.out;
    int code;
    try {
      System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
      code = BenchMain.run(args.toArray(String[]::new));
    } finally {
      System.setOut(out);
    }
    String printed = buf.toString(StandardCharsets.UTF_8);
    out.print(printed);
    assertThat(code).isZero();
    List<String> lines = printed.lines().toList();
    assertThat(lines.get(lines.size() - 1))
        .matches(
            "handover: rounds=1 stop_pause_ms=\\d+/\\d+/\\d+ takeback_pause_ms=\\d+/\\d+/\\d+"
                + " steady_gap_ms=\\d+");
  }
}
