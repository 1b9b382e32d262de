package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.ReadmeTables;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The queue options reference (docs/reference/queue-options.md) is what the definitions render. */
class QueueOptionsDocTest {

  @Test
  void theReadmeTableIsRenderedFromTheDefinitions() {
    Path page = ReadmeTables.page("docs/reference/queue-options.md");
    String rendered = ReadmeTables.placed(page, QueueOptionsDoc.markdown());
    assertThat(ReadmeTables.between(page, QueueOptionsDoc.BEGIN, QueueOptionsDoc.END, rendered))
        .as(
            "docs/reference/queue-options.md's table differs from QueueOptions.OPTIONS; regenerate it with"
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
