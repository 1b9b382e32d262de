package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Fuzz targets for the two parsers that read what a DBA writes: a queue table's comment and a
 * duration. Whatever the text, each either returns a value within its bounds that prints and parses
 * back to itself, or refuses with its own exception type; nothing else may escape.
 *
 * <p>In the normal test run these replay the committed inputs under {@code OptionsFuzzTestInputs}
 * (regression mode); {@code scripts/fuzz} runs them for longer with {@code JAZZER_FUZZ=1}.
 */
class OptionsFuzzTest {

  @FuzzTest(maxDuration = "10s")
  void commentParser(byte[] input) {
    String text = new String(input, StandardCharsets.UTF_8);
    String comment =
        QueueOptions.isQueueComment(text) || text.startsWith("!") ? text : "sluice_queue " + text;
    QueueOptions o;
    try {
      o = QueueOptions.parseComment("fuzz_q", comment);
    } catch (QueueConfigException e) {
      assertThat(e.getMessage()).contains("fuzz_q");
      return;
    }
    for (QueueOption<?> opt : QueueOptions.OPTIONS) {
      Object v = o.get(opt);
      if (v instanceof Duration d) {
        assertThat(d.toMillis()).as(opt.name()).isBetween(opt.min(), opt.max());
      } else if (v instanceof Integer n) {
        assertThat((long) n).as(opt.name()).isBetween(opt.min(), opt.max());
      }
    }
    assertThat(o.maxBackoff()).isGreaterThanOrEqualTo(o.minBackoff());
    assertThat(QueueOptions.parseComment("fuzz_q", o.toComment())).isEqualTo(o);
    assertThat(o.tenantCacheCap()).isPositive();
  }

  @FuzzTest(maxDuration = "10s")
  void durationParser(byte[] input) {
    String text = new String(input, StandardCharsets.UTF_8);
    Duration d;
    try {
      d = Durations.parse(text);
    } catch (IllegalArgumentException e) {
      assertThat(e.getMessage()).isNotBlank();
      return;
    }
    assertThat(d.isNegative()).isFalse();
    assertThat(d.toNanos()).isNotNegative();
    assertThat(Durations.parse(Durations.format(d))).isEqualTo(d);
  }
}
