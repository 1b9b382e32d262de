package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.proto.v1.Acks;
import dev.sluice.proto.v1.EventRef;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.ReceiverMessage;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.proto.v1.Subscribe;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.micrometer.core.instrument.Gauge;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A receiver that keeps sending acks but never reads its stream: the answers the manager owes it
 * pile up; past a bound the manager cuts it off and releases its in-flight events.
 */
class UnreadStreamTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(UnreadStreamTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void aReceiverThatDoesNotReadIsCutOffAndItsEventsAreReleased() throws Exception {
    h.createQueue("unread_q", "ack_wait=60s min_backoff=10ms max_backoff=20ms");
    await().atMost(10, SECONDS).until(() -> h.server().engine().find("unread_q").isPresent());
    AtomicInteger read = new AtomicInteger();
    ClientCallStreamObserver<ReceiverMessage>[] call = new ClientCallStreamObserver[1];
    SluiceGrpc.newStub(h.channel())
        .subscribe(
            new ClientResponseObserver<ReceiverMessage, ManagerMessage>() {
              @Override
              public void beforeStart(ClientCallStreamObserver<ReceiverMessage> rs) {
                call[0] = rs;
                rs.disableAutoRequestWithInitial(1); // Subscribed, then nothing
              }

              @Override
              public void onNext(ManagerMessage m) {
                read.incrementAndGet();
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onCompleted() {}
            });
    call[0].onNext(
        ReceiverMessage.newBuilder()
            .setSubscribe(
                Subscribe.newBuilder().setQueue("unread_q").setReceiverId("deaf").setMaxInFlight(1))
            .build());
    h.exec("INSERT INTO unread_q (order_id) VALUES (1)");
    await().atMost(10, SECONDS).until(() -> h.queryLong("SELECT state FROM unread_q") == 1);
    // Acks of unknown events: each is answered, and none of the answers is read.
    Acks.Builder acks = Acks.newBuilder();
    for (int i = 0; i < 1000; i++) {
      acks.addEvents(EventRef.newBuilder().setId(1_000_000 + i).setEpoch(1));
    }
    ReceiverMessage flood = ReceiverMessage.newBuilder().setAcks(acks).build();
    for (int i = 0; i < 400 && gauge() > 0; i++) {
      call[0].onNext(flood);
      if (i % 50 == 49) {
        await().atMost(10, SECONDS).until(call[0]::isReady);
      }
    }
    await().atMost(10, SECONDS).until(() -> gauge() == 0);
    await()
        .atMost(10, SECONDS)
        .untilAsserted(
            () ->
                assertThat(h.queryLong("SELECT state FROM unread_q"))
                    .as("released: pending again")
                    .isZero());
    call[0].cancel("done", null);
  }

  static double gauge() {
    Gauge g = h.registry.find("sluice.receivers.connected").tag("queue", "unread_q").gauge();
    return g == null ? -1 : g.value();
  }
}
