package dev.sluice.receiver;

import static dev.sluice.receiver.TestSluiceServer.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.proto.v1.EventRef;
import io.grpc.Status;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ReceiverReconnectTest extends ReceiverTestSupport {

  @Test
  void resubscribesAfterTheManagerBreaksTheStream() {
    SluiceReceiver receiver =
        startReceiver(e -> {}, b -> b.receiverId("r-re").concurrency(2).maxInFlight(5));

    server.breakStream(Status.UNAVAILABLE.withDescription("manager restarting"));

    await().atMost(WAIT).until(() -> server.subscribes.size() == 2);
    assertThat(server.subscribes.get(1)).isEqualTo(server.subscribes.get(0));
    assertThat(server.subscribes.get(1).getReceiverId()).isEqualTo("r-re");
    assertThat(server.subscribes.get(1).getMaxInFlight()).isEqualTo(5);
    assertThat(receiver.awaitSubscribed(WAIT)).isTrue();
    assertThat(receiver.stats().reconnects()).isEqualTo(1);

    server.push(event(9, 3));
    await().atMost(WAIT).until(() -> server.acked().size() == 1);
    assertThat(server.acked().get(0).getEpoch()).isEqualTo(3);
  }

  @Test
  void acksForEventsOfTheOldStreamGoOutTogetherOnTheNewOne() throws Exception {
    CountDownLatch started = new CountDownLatch(3);
    CountDownLatch release = new CountDownLatch(1);
    SluiceReceiver receiver =
        startReceiver(
            e -> {
              started.countDown();
              release.await(30, TimeUnit.SECONDS);
            },
            b -> b.concurrency(3));
    server.push(event(1, 1), event(2, 1), event(3, 1));
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    // Break the stream while all three are being handled, and keep the new one unsubscribed
    // until the three acks are waiting, so they must travel together.
    server.holdSubscribed = true;
    server.breakStream(Status.UNAVAILABLE);
    await().atMost(WAIT).until(() -> server.subscribes.size() == 2);
    release.countDown();
    await().atMost(WAIT).until(() -> receiver.stats().inFlight() == 0);
    assertThat(server.ackMessages).isEmpty();
    server.releaseSubscribed();

    await().atMost(WAIT).until(() -> server.acked().size() == 3);
    assertThat(server.ackMessages).hasSize(1);
    assertThat(server.acked()).extracting(EventRef::getId).containsExactlyInAnyOrder(1L, 2L, 3L);
    await().atMost(WAIT).until(() -> receiver.stats().ackOk() == 3);
  }

  @Test
  void resendsAcksTheOldStreamLeftUnanswered() {
    SluiceReceiver receiver = startReceiver(e -> {}, b -> b);
    server.answerAcks = false;
    server.push(event(4, 2));
    await().atMost(WAIT).until(() -> server.acked().size() == 1);

    server.answerAcks = true;
    server.breakStream(Status.UNAVAILABLE);

    // Whether the first ack took effect is unknown to the receiver, so it is sent again.
    await().atMost(WAIT).until(() -> server.acked().size() == 2);
    assertThat(server.acked().get(1)).isEqualTo(server.acked().get(0));
    await().atMost(WAIT).until(() -> receiver.stats().ackOk() == 1);
    assertThat(receiver.stats().acked()).isEqualTo(1);
  }
}
