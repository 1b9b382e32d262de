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
 * Runs {@code drain --outlet kafka} end to end with a small N: the gRPC drain, the same events
 * drained by a queue bound to a Kafka channel (the real manager, an embedded Kafka broker), and the
 * broker floor through the same publisher. Checks the figures line and that every event was acked
 * in the table and reached the topic; not a measurement.
 */
class DrainOutletSmokeTest {

  @Test
  void drainWithAKafkaOutletAcksEveryEventAndPrintsTheChannelFigures() {
    List<String> args = new ArrayList<>(List.of("drain", "--events", "2000", "--outlet", "kafka"));
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
    assertThat(printed)
        .contains("sluice_kafka: 2,000 of 2,000 events acked in the table")
        .contains("kafka_floor: the broker's topic bench_events got 2,000 messages");
    List<String> lines = printed.lines().toList();
    assertThat(lines.get(lines.size() - 1))
        .matches(
            "drain: sluice=\\d+/s db_scheduler=n/a floor=n/a ratio=n/a floor_ratio=n/a"
                + " sluice_kafka=\\d+/s kafka_floor=\\d+/s kafka_floor_ratio=\\d+\\.\\d\\d");
  }
}
