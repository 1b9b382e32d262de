package dev.sluice.receiver;

import static dev.sluice.receiver.TestSluiceServer.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.proto.v1.AckStatus;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * An observer sees each manager's answer to each ack and nack, with the event it concerns, and each
 * stream's end with its status: what {@link ReceiverStats} only counts.
 */
class ReceiverObserverAnswersTest extends ReceiverTestSupport {

  /** Records what the receiver tells its observers beside the handling. */
  static final class Recorder implements ReceiverObserver {
    final List<Answer> answers = new CopyOnWriteArrayList<>();
    final List<String> ends = new CopyOnWriteArrayList<>();

    @Override
    public Handling handlingStarted(ReceivedEvent event) {
      return Handling.NONE;
    }

    @Override
    public void answered(Answer answer) {
      answers.add(answer);
    }

    @Override
    public void streamEnded(String endpoint, String code, String description) {
      ends.add(endpoint + " " + code + " " + description);
    }
  }

  @Test
  void eachAckAndNackIsReportedWithItsEventAndStatus() {
    Recorder recorder = new Recorder();
    SluiceReceiver receiver =
        startReceiver(
            e -> {
              if (e.id() == 3) {
                throw new RetryLater(Duration.ofMillis(100), "later");
              }
            },
            b -> b.observer(recorder).receiverId("observed"));
    String endpoint = server.target();

    server.answer = AckStatus.ACK_STATUS_STALE;
    server.push(event(1, 7).toBuilder().setShard("s9").build());
    await().atMost(WAIT).until(() -> recorder.answers.size() == 1);
    server.answer = AckStatus.ACK_STATUS_OK;
    server.push(event(2, 1).toBuilder().setShard("s9").build());
    await().atMost(WAIT).until(() -> recorder.answers.size() == 2);
    server.answer = AckStatus.ACK_STATUS_UNKNOWN;
    server.push(event(3, 2).toBuilder().setShard("s9").build());
    await().atMost(WAIT).until(() -> recorder.answers.size() == 3);

    assertThat(recorder.answers)
        .containsExactly(
            new ReceiverObserver.Answer(endpoint, "s9", 1, 7, ReceiverObserver.AnswerStatus.STALE),
            new ReceiverObserver.Answer(endpoint, "s9", 2, 1, ReceiverObserver.AnswerStatus.OK),
            new ReceiverObserver.Answer(
                endpoint, "s9", 3, 2, ReceiverObserver.AnswerStatus.UNKNOWN));
    // The counters agree with what the observer saw.
    ReceiverStats stats = receiver.stats();
    assertThat(stats.ackStale()).isEqualTo(1);
    assertThat(stats.ackOk()).isEqualTo(1);
    assertThat(stats.ackUnknown()).isEqualTo(1);
    assertThat(recorder.ends).isEmpty();
  }

  @Test
  void aRefusedStreamIsReportedWithItsCodeAndRetried() {
    Recorder recorder = new Recorder();
    server.refuseSubscribe = Status.UNAUTHENTICATED.withDescription("no token");
    SluiceReceiver receiver =
        SluiceReceiver.builder()
            .target(server.target())
            .queue("q")
            .receiverId("refused")
            .handler(e -> {})
            .observer(recorder)
            .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .build();
    try {
      receiver.start();
      await()
          .atMost(WAIT)
          .until(() -> recorder.ends.size() >= 2); // refused, and refused again: it retries
      assertThat(recorder.ends).allMatch((server.target() + " UNAUTHENTICATED no token")::equals);
      assertThat(receiver.stats().streamsConnected()).isZero();

      server.refuseSubscribe = null;
      assertThat(receiver.awaitSubscribed(WAIT)).as("subscribed once no longer refused").isTrue();
    } finally {
      receiver.abort();
    }
  }

  @Test
  void anObserverThatThrowsChangesNothing() {
    ReceiverObserver failing =
        new ReceiverObserver() {
          @Override
          public Handling handlingStarted(ReceivedEvent event) {
            return Handling.NONE;
          }

          @Override
          public void answered(Answer answer) {
            throw new IllegalStateException("observer bug");
          }
        };
    Recorder after = new Recorder();
    SluiceReceiver receiver =
        startReceiver(e -> {}, b -> b.observer(failing).observer(after).receiverId("observed"));
    server.push(event(1, 1), event(2, 1));
    await().atMost(WAIT).until(() -> after.answers.size() == 2);
    assertThat(receiver.stats().ackOk()).isEqualTo(2);
    assertThat(server.ackedIds()).containsExactlyInAnyOrder(1L, 2L);
  }
}
