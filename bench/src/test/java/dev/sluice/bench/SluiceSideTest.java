package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SluiceSideTest {
  @AfterEach
  void reset() {
    SluiceSide.useOptions("");
  }

  @Test
  void queueOptionsReplaceOrAddToTheDefaults() {
    assertThat(SluiceSide.useOptions("poll_interval=10ms max_concurrency=8"))
        .isEqualTo(
            "sluice_queue ack_wait=30s cache_size=10000 poll_interval=10ms max_concurrency=8");
    assertThat(SluiceSide.comment()).contains("poll_interval=10ms");
  }

  @Test
  void noOptionsMeansTheDocumentedDefaults() {
    assertThat(SluiceSide.useOptions("")).isEqualTo(SluiceSide.COMMENT);
  }

  @Test
  void aMalformedOptionIsRefused() {
    assertThatThrownBy(() -> SluiceSide.useOptions("poll_interval"))
        .hasMessageContaining("--queue-options");
  }
}
