package dev.sluice.receiver;

import static dev.sluice.receiver.TestSluiceServer.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Acks;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.EventRef;
import dev.sluice.proto.v1.Nack;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class ReceiverAckTest extends ReceiverTestSupport {

  @Test
  void acksEveryEventWithItsIdAndEpochAfterNormalReturn() {
    Map<Long, String> payloads = new ConcurrentHashMap<>();
    SluiceReceiver receiver =
        startReceiver(e -> payloads.put(e.id(), e.getString("payload")), b -> b.concurrency(4));

    server.push(
        LongStream.rangeClosed(1, 20).mapToObj(id -> event(id, id + 100)).toArray(Event[]::new));

    await().atMost(WAIT).until(() -> server.acked().size() == 20);
    Map<Long, Long> epochById =
        server.acked().stream().collect(Collectors.toMap(EventRef::getId, EventRef::getEpoch));
    assertThat(epochById).hasSize(20);
    epochById.forEach((id, epoch) -> assertThat(epoch).isEqualTo(id + 100));
    assertThat(server.ackMessages).allSatisfy(m -> assertThat(m.getEventsCount()).isPositive());
    assertThat(server.ackMessages.stream().mapToInt(Acks::getEventsCount).sum()).isEqualTo(20);
    assertThat(server.nacks()).isEmpty();
    assertThat(payloads).hasSize(20).containsEntry(7L, "p7");

    await().atMost(WAIT).until(() -> receiver.stats().ackOk() == 20);
    ReceiverStats stats = receiver.stats();
    assertThat(stats.received()).isEqualTo(20);
    assertThat(stats.acked()).isEqualTo(20);
    assertThat(stats.nacked()).isZero();
    assertThat(stats.inFlight()).isZero();
    // Defaults: the window equals the concurrency, and the id is hostname-pid-random.
    assertThat(server.subscribes.get(0).getMaxInFlight()).isEqualTo(4);
    assertThat(server.subscribes.get(0).getQueue()).isEqualTo("q");
    assertThat(receiver.receiverId()).matches(".+-" + ProcessHandle.current().pid() + "-[0-9a-f]+");
  }

  @Test
  void countsStaleAndUnknownAnswers() {
    SluiceReceiver receiver = startReceiver(e -> {}, b -> b);
    server.answer = AckStatus.ACK_STATUS_STALE;
    server.push(event(1, 1));
    await().atMost(WAIT).until(() -> receiver.stats().ackStale() == 1);
    server.answer = AckStatus.ACK_STATUS_UNKNOWN;
    server.push(event(2, 1));
    await().atMost(WAIT).until(() -> receiver.stats().ackUnknown() == 1);
    assertThat(receiver.stats().ackOk()).isZero();
  }

  @Test
  void nacksWithRetryAfterWhenHandlerThrowsRetryLater() {
    SluiceReceiver receiver =
        startReceiver(
            e -> {
              throw new RetryLater(Duration.ofSeconds(3), "downstream busy");
            },
            b -> b);
    server.push(event(5, 2));

    await().atMost(WAIT).until(() -> server.nacks().size() == 1);
    Nack nack = server.nacks().get(0);
    assertThat(nack.getEvent().getId()).isEqualTo(5);
    assertThat(nack.getEvent().getEpoch()).isEqualTo(2);
    assertThat(nack.getRetryAfterMs()).isEqualTo(3000);
    assertThat(nack.getReason()).isEqualTo("downstream busy");
    assertThat(server.acked()).isEmpty();
    await().atMost(WAIT).until(() -> receiver.stats().ackOk() == 1);
    assertThat(receiver.stats().nacked()).isEqualTo(1);
  }

  @Test
  void nacksWithServerBackoffAndReasonWhenHandlerThrows() {
    startReceiver(
        e -> {
          throw new IllegalStateException("boom");
        },
        b -> b);
    server.push(event(6, 1));

    await().atMost(WAIT).until(() -> server.nacks().size() == 1);
    Nack nack = server.nacks().get(0);
    assertThat(nack.getEvent().getId()).isEqualTo(6);
    assertThat(nack.getRetryAfterMs()).isZero();
    assertThat(nack.getReason()).isEqualTo("java.lang.IllegalStateException: boom");
  }

  @Test
  void neverRunsMoreHandlersThanConcurrency() throws Exception {
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    CountDownLatch release = new CountDownLatch(1);
    Map<String, Boolean> threadNames = new ConcurrentHashMap<>();
    SluiceReceiver receiver =
        startReceiver(
            e -> {
              int now = running.incrementAndGet();
              maxRunning.accumulateAndGet(now, Math::max);
              threadNames.put(Thread.currentThread().getName(), true);
              try {
                release.await(30, TimeUnit.SECONDS);
              } finally {
                running.decrementAndGet();
              }
            },
            b -> b.concurrency(3).maxInFlight(10).receiverId("r-conc"));
    assertThat(server.subscribes.get(0).getMaxInFlight()).isEqualTo(10);

    server.push(LongStream.rangeClosed(1, 10).mapToObj(id -> event(id, 1)).toArray(Event[]::new));

    // All ten are in the receiver, so only the pool size can be holding seven of them back.
    await().atMost(WAIT).until(() -> receiver.stats().received() == 10 && running.get() == 3);
    assertThat(receiver.stats().inFlight()).isEqualTo(10);
    release.countDown();
    await().atMost(WAIT).until(() -> server.acked().size() == 10);
    assertThat(maxRunning.get()).isEqualTo(3);
    assertThat(threadNames.keySet())
        .allSatisfy(n -> assertThat(n).startsWith("sluice-receiver-r-conc-handler-"));
  }
}
