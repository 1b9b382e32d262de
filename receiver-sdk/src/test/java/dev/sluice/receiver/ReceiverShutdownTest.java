package dev.sluice.receiver;

import static dev.sluice.receiver.TestSluiceServer.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.proto.v1.Nack;
import dev.sluice.proto.v1.NotifyShutdownRequest;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ReceiverShutdownTest extends ReceiverTestSupport {

  @Test
  void closeNotifiesTheManagerThenWaitsForTheSlowHandlerAndSendsItsAck() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    SluiceReceiver receiver =
        startReceiver(
            e -> {
              started.countDown();
              release.await(30, TimeUnit.SECONDS);
            },
            b -> b.receiverId("r-close"));
    server.push(event(7, 1));
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    CompletableFuture<Void> closing = CompletableFuture.runAsync(receiver::close);
    await().atMost(WAIT).until(() -> server.notified.contains("r-close"));
    assertThat(closing).isNotDone();
    assertThat(server.acked()).isEmpty();

    release.countDown();
    closing.get(10, TimeUnit.SECONDS);

    List<String> t = server.timeline;
    assertThat(t).containsSubsequence("subscribe:r-close", "notify:r-close", "ack:7", "completed");
    assertThat(t.indexOf("notify:r-close")).isLessThan(t.indexOf("ack:7"));
    assertThat(receiver.stats().ackOk()).isEqualTo(1);
    assertThat(receiver.stats().inFlight()).isZero();
    // Every thread the receiver started is gone (the callback thread ends once idle).
    await()
        .atMost(WAIT)
        .until(
            () ->
                Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(th -> th.getName().startsWith("sluice-receiver-r-close-")));
    receiver.close(); // idempotent
    assertThatThrownBy(receiver::start).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void closeInterruptsHandlersAfterShutdownTimeoutAndNacksWhatNeverStarted() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    SluiceReceiver receiver =
        startReceiver(
            e -> {
              started.countDown();
              never.await();
            },
            b -> b.concurrency(1).maxInFlight(2).shutdownTimeout(Duration.ofMillis(100)));
    server.push(event(1, 1), event(2, 1));
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    receiver.close();

    assertThat(server.nacks()).hasSize(2);
    Nack interrupted =
        server.nacks().stream().filter(n -> n.getEvent().getId() == 1).findFirst().orElseThrow();
    Nack refused =
        server.nacks().stream().filter(n -> n.getEvent().getId() == 2).findFirst().orElseThrow();
    assertThat(interrupted.getReason()).startsWith("java.lang.InterruptedException");
    assertThat(refused.getReason()).isEqualTo(Dispatcher.REFUSED);
    assertThat(server.timeline.indexOf("completed"))
        .isGreaterThan(server.timeline.indexOf("nack:1"))
        .isGreaterThan(server.timeline.indexOf("nack:2"));
  }

  @Test
  void abortSendsNothingFurther() throws Exception {
    CountDownLatch started = new CountDownLatch(2);
    CountDownLatch finished = new CountDownLatch(2);
    CountDownLatch never = new CountDownLatch(1);
    SluiceReceiver receiver =
        startReceiver(
            e -> {
              started.countDown();
              try {
                never.await();
              } catch (InterruptedException ignored) {
                // Return normally: this would be an ack, had the receiver not been aborted.
              } finally {
                finished.countDown();
              }
            },
            b -> b.concurrency(2));
    server.push(event(1, 1), event(2, 1));
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    receiver.abort();

    assertThat(finished.await(10, TimeUnit.SECONDS)).isTrue();
    await()
        .atMost(WAIT)
        .until(
            () -> server.streamEnds.stream().anyMatch(s -> s.getCode() == Status.Code.CANCELLED));
    await()
        .during(Duration.ofMillis(300))
        .atMost(WAIT)
        .until(
            () ->
                server.ackMessages.isEmpty()
                    && server.nackMessages.isEmpty()
                    && server.notified.isEmpty()
                    && server.subscribes.size() == 1);
    receiver.close(); // after abort: a no-op, still sends nothing
    assertThat(server.notified).isEmpty();
  }

  @Test
  void closeLeavesACallerOwnedChannelOpen() {
    ManagedChannel channel =
        ManagedChannelBuilder.forTarget(server.target()).usePlaintext().build();
    try {
      SluiceReceiver receiver =
          startReceiver(e -> {}, b -> b.target(null).channel(channel).receiverId("r-own"));
      server.push(event(3, 1));
      await().atMost(WAIT).until(() -> receiver.stats().ackOk() == 1);

      receiver.close();

      assertThat(channel.isShutdown()).isFalse();
      SluiceGrpc.newBlockingStub(channel)
          .notifyShutdown(NotifyShutdownRequest.newBuilder().setReceiverId("still-usable").build());
      assertThat(server.notified).containsExactly("r-own", "still-usable");
    } finally {
      channel.shutdownNow();
    }
  }
}
