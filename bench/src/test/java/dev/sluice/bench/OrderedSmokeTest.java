package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs {@code ordered} end to end with tiny sizes — both drains, the trickle alone and beside a
 * held hot backlog — and checks the figures line and that no key's events arrived out of id order
 * in an ordered phase. A smoke test of the harness, not a measurement: it must stay fast.
 */
class OrderedSmokeTest {

  @Test
  void orderedPrintsOneLineOfFiguresAndKeepsEachKeyInOrder() {
    List<String> args =
        new ArrayList<>(
            List.of(
                "ordered",
                "--keys",
                "20",
                "--per-key",
                "10",
                "--backlog",
                "500",
                "--quiet-rate",
                "40",
                "--warmup",
                "0.5",
                "--seconds",
                "1"));
    String printed = BenchRun.of(args.toArray(String[]::new)).printed();
    assertThat(new BenchRun(printed).lastLine())
        .matches(
            "ordered: drain=\\d+/s unordered=\\d+/s drain_ratio=\\d+\\.\\d\\d"
                + " quiet_p99_ms=\\d+\\.\\d\\d solo_p99_ms=\\d+\\.\\d\\d p99_ratio=\\d+\\.\\d\\d"
                + " hot_rate=\\d+/s rows_per_event=\\d+\\.\\d\\d solo_rows_per_event=\\d+\\.\\d\\d"
                + " drain_rows_per_event=\\d+\\.\\d\\d unordered_rows_per_event=\\d+\\.\\d\\d");
    assertThat(printed)
        .contains("# drain: 200 deliveries; 0 arrived before an earlier id of their key")
        .contains("# solo: 0 deliveries arrived before an earlier id of their key")
        .contains("# hot: 0 deliveries arrived before an earlier id of their key")
        .contains("held rows in the table: 499 of 500");
  }
}
