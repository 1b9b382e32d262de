package dev.sluice.receiver;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutboxTest {
  private final Outbox outbox = new Outbox();

  @Test
  void takesEverythingQueuedInOneBatchUpToTheCap() throws Exception {
    for (int i = 1; i <= 5; i++) {
      outbox.add(Completion.ack(i, 1, ""));
    }
    assertThat(outbox.takeBatch(3)).extracting(Completion::id).containsExactly(1L, 2L, 3L);
    assertThat(outbox.takeBatch(100)).extracting(Completion::id).containsExactly(4L, 5L);
  }

  @Test
  void requeuedCompletionsGoFirstAndStayUnanswered() throws Exception {
    outbox.add(Completion.ack(1, 1, ""));
    outbox.add(Completion.ack(2, 1, ""));
    List<Completion> first = outbox.takeBatch(1);
    outbox.requeue(first);
    assertThat(outbox.takeBatch(10)).extracting(Completion::id).containsExactly(1L, 2L);
    assertThat(outbox.unanswered()).isEqualTo(2);
    assertThat(outbox.awaitAllAnswered(Duration.ZERO)).isFalse();
    outbox.answered(2);
    assertThat(outbox.awaitAllAnswered(Duration.ZERO)).isTrue();
  }

  @Test
  void drainIntoTopsUpWithoutBlocking() {
    List<Completion> batch = new java.util.ArrayList<>();
    outbox.drainInto(batch, 10);
    assertThat(batch).isEmpty();
    outbox.add(Completion.nack(1, 1, "", 0, "x".repeat(5000)));
    outbox.drainInto(batch, 10);
    assertThat(batch).singleElement().satisfies(c -> assertThat(c.reason()).hasSize(1024));
  }
}
