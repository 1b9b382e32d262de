package dev.sluice.client;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the producer refuses before it touches the connection (inserts are tested end to end). */
class EventProducerTest {
  @Test
  void badNamesAndSystemColumnsAreRefusedBeforeAnyStatement() {
    assertThatThrownBy(() -> EventProducer.insert(null, "bad name", Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("queue name");
    assertThatThrownBy(() -> EventProducer.insert(null, "q", Map.of("state", 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("system column");
    assertThatThrownBy(() -> EventProducer.EventOptions.builder().priority(200).build())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDebounceWithAnIdOrABadKeyIsRefusedBeforeAnyStatement() {
    assertThatThrownBy(
            () ->
                EventProducer.insertDebounced(
                    null, "q", "k", Map.of(), EventProducer.EventOptions.builder().id(7).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("queue q: a debounced insert takes no id");
    assertThatThrownBy(() -> EventProducer.insertDebounced(null, "q", "", Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dedup key");
    assertThatThrownBy(
            () -> EventProducer.insertDebounced(null, "q", "k", Map.of("dedup_key", "other")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("but the key given is 'k'");
  }
}
