package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.ReadmeTables;
import org.junit.jupiter.api.Test;

/** The README's queue options table is the one the options' definitions render. */
class QueueOptionsDocTest {

  @Test
  void theReadmeTableIsRenderedFromTheDefinitions() {
    String rendered = QueueOptionsDoc.markdown();
    assertThat(ReadmeTables.between(QueueOptionsDoc.BEGIN, QueueOptionsDoc.END, rendered))
        .as(
            "README.md's queue options table differs from QueueOptions.OPTIONS; regenerate it with"
                + " ./mvnw -o -q -B test -pl db -am -Dtest=QueueOptionsDocTest"
                + " -Dsurefire.failIfNoSpecifiedTests=false"
                + " -Dsluice.docs.write=true (then review the diff)")
        .isEqualTo(rendered);
  }

  @Test
  void everyOptionHasAMeaning() {
    for (QueueOption<?> o : QueueOptions.OPTIONS) {
      assertThat(o.doc()).as(o.name()).isNotBlank();
    }
  }

  @Test
  void theRestartListIsTheOptionsNotAppliedInPlace() {
    assertThat(QueueOptions.RESTART_OPTIONS)
        .containsAll(QueueOptions.CHANNEL_OPTIONS)
        .contains("cache_size", "cache_bytes", "fair", "class_shares")
        .doesNotContain("ack_wait", "max_attempts", "poll_interval", "max_event_bytes");
  }
}
