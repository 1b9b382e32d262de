package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

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
    String printed = BenchRun.of(args.toArray(String[]::new)).printed();
    assertThat(printed)
        .contains("sluice_kafka: 2,000 of 2,000 events acked in the table")
        .contains("kafka_floor: the broker's topic bench_events got 2,000 messages");
    assertThat(new BenchRun(printed).lastLine())
        .matches(
            "drain: sluice=\\d+/s db_scheduler=n/a floor=n/a ratio=n/a floor_ratio=n/a"
                + " sluice_kafka=\\d+/s kafka_floor=\\d+/s kafka_floor_ratio=\\d+\\.\\d\\d");
  }
}
