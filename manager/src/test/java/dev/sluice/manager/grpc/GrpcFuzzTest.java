package dev.sluice.manager.grpc;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Acks;
import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.EventRef;
import dev.sluice.proto.v1.Flow;
import dev.sluice.proto.v1.ListQueuesRequest;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Nack;
import dev.sluice.proto.v1.Nacks;
import dev.sluice.proto.v1.NotifyShutdownRequest;
import dev.sluice.proto.v1.QueueStatsRequest;
import dev.sluice.proto.v1.ReceiverMessage;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.proto.v1.Subscribe;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Fuzzes the gRPC API of a real manager over loopback: arbitrary bytes are parsed as the API's
 * request messages (or, when they do not parse, turned into requests field by field) and sent on a
 * Subscribe stream or as unary calls. The only acceptable outcomes are a response or a clean status
 * (never UNKNOWN or INTERNAL, never a hang); the queue's worker threads must all stay alive, and at
 * the end the queue still delivers.
 *
 * <p>The normal test run replays the committed inputs under {@code GrpcFuzzTestInputs}; {@code
 * scripts/fuzz} runs it for longer with {@code JAZZER_FUZZ=1}.
 */
class GrpcFuzzTest {
  static final String QUEUE = "fuzz_q";
  static final Set<Status.Code> UNCLEAN =
      Set.of(Status.Code.UNKNOWN, Status.Code.INTERNAL, Status.Code.DEADLINE_EXCEEDED);

  static Harness h;
  static List<Thread> workers;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(GrpcFuzzTest.class);
    h.createQueue(QUEUE, "ack_wait=2s min_backoff=0s max_backoff=0s");
    h.startManager();
    RawReceiver warm = h.rawReceiver(QUEUE, "warm", 1);
    org.awaitility.Awaitility.await().atMost(30, SECONDS).until(() -> warm.subscribed);
    warm.close();
    StringBuilder rows = new StringBuilder("INSERT INTO " + QUEUE + " (order_id) VALUES (0)");
    for (int i = 1; i < 50; i++) {
      rows.append(",(").append(i).append(')');
    }
    h.exec(rows.toString());
    String prefix = "sluice-s1-" + QUEUE + "-";
    workers =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith(prefix))
            .toList();
    assertThat(workers).hasSize(5);
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      assertWorkersAlive();
      RawReceiver r = h.rawReceiver(QUEUE, "after-fuzz", 100);
      h.exec("INSERT INTO " + QUEUE + " (order_id) VALUES (-1)");
      boolean delivered = false;
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!delivered && System.nanoTime() < until) {
        Event e = r.events.poll(1, SECONDS);
        if (e != null) {
          delivered = e.getColumnsMap().get("order_id").getIntValue() == -1;
          r.ack(e);
        }
      }
      assertThat(delivered).as("the queue still delivers after fuzzing").isTrue();
    } finally {
      h.close();
    }
  }

  static void assertWorkersAlive() {
    assertThat(workers).allSatisfy(t -> assertThat(t.isAlive()).as(t.getName()).isTrue());
  }

  @FuzzTest(maxDuration = "10s")
  void requests(FuzzedDataProvider data) throws Exception {
    switch (data.consumeInt(0, 4)) {
      case 0 -> subscribeStream(data);
      case 1 ->
          unary(
              () ->
                  blocking()
                      .cancel(
                          parsed(
                              CancelRequest.parser(),
                              data,
                              () ->
                                  CancelRequest.newBuilder()
                                      .setQueue(queueName(data))
                                      .setShard(data.consumeString(8))
                                      .addAllIds(List.of(data.consumeLong(), data.consumeLong()))
                                      .build())));
      case 2 ->
          unary(
              () ->
                  blocking()
                      .queueStats(
                          parsed(
                              QueueStatsRequest.parser(),
                              data,
                              () ->
                                  QueueStatsRequest.newBuilder()
                                      .setQueue(queueName(data))
                                      .build())));
      case 3 ->
          unary(
              () ->
                  blocking()
                      .notifyShutdown(
                          parsed(
                              NotifyShutdownRequest.parser(),
                              data,
                              () ->
                                  NotifyShutdownRequest.newBuilder()
                                      .setReceiverId(data.consumeString(200))
                                      .build())));
      default ->
          unary(
              () ->
                  blocking()
                      .listQueues(
                          parsed(
                              ListQueuesRequest.parser(),
                              data,
                              ListQueuesRequest::getDefaultInstance)));
    }
    assertWorkersAlive();
  }

  private static SluiceGrpc.SluiceBlockingStub blocking() {
    return h.blocking().withDeadlineAfter(10, SECONDS);
  }

  private static String queueName(FuzzedDataProvider data) {
    return data.consumeBoolean() ? QUEUE : data.consumeString(70);
  }

  /** The next bytes as a message; when they do not parse, one built from the next values. */
  private static <T extends MessageLite> T parsed(
      Parser<T> parser, FuzzedDataProvider data, Supplier<T> built) {
    byte[] bytes = data.consumeBytes(data.consumeInt(0, 300));
    if (data.consumeBoolean()) {
      try {
        return parser.parseFrom(bytes);
      } catch (InvalidProtocolBufferException e) {
        // fall through to a message built field by field
      }
    }
    return built.get();
  }

  private static void unary(Supplier<?> call) {
    try {
      assertThat(call.get()).isNotNull();
    } catch (StatusRuntimeException e) {
      assertThat(e.getStatus().getCode()).as(e.getStatus().toString()).isNotIn(UNCLEAN);
    }
  }

  private static void subscribeStream(FuzzedDataProvider data) throws Exception {
    CountDownLatch ended = new CountDownLatch(1);
    AtomicReference<Status> status = new AtomicReference<>();
    AtomicReference<Event> lastEvent = new AtomicReference<>();
    StreamObserver<ReceiverMessage> out =
        SluiceGrpc.newStub(h.channel())
            .subscribe(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ManagerMessage m) {
                    if (m.hasEvents() && m.getEvents().getEventsCount() > 0) {
                      lastEvent.set(m.getEvents().getEvents(0));
                    }
                  }

                  @Override
                  public void onError(Throwable t) {
                    status.set(Status.fromThrowable(t));
                    ended.countDown();
                  }

                  @Override
                  public void onCompleted() {
                    status.set(Status.OK);
                    ended.countDown();
                  }
                });
    try {
      if (data.consumeBoolean()) {
        out.onNext(
            ReceiverMessage.newBuilder()
                .setSubscribe(
                    Subscribe.newBuilder()
                        .setQueue(queueName(data))
                        .setReceiverId(data.consumeBoolean() ? "fuzz" : data.consumeString(200))
                        .setMaxInFlight(data.consumeBoolean() ? 5 : data.consumeInt())
                        .setKeyRange(data.consumeBoolean() ? "" : data.consumeString(20)))
                .build());
      }
      int n = data.consumeInt(0, 8);
      for (int i = 0; i < n; i++) {
        out.onNext(parsed(ReceiverMessage.parser(), data, () -> built(data, lastEvent.get())));
      }
      out.onCompleted();
    } catch (RuntimeException e) {
      // The server ended the stream while we were sending: its status is checked below.
      out.onError(Status.CANCELLED.withDescription("client gave up").asRuntimeException());
    }
    assertThat(ended.await(10, SECONDS)).as("the stream ends once the client is done").isTrue();
    Status s = status.get();
    assertThat(s.getCode()).as(s.toString()).isNotIn(UNCLEAN);
  }

  /** An ack, nack or flow message with fuzzed fields, about a delivered event when there is one. */
  private static ReceiverMessage built(FuzzedDataProvider data, Event seen) {
    EventRef.Builder ref = EventRef.newBuilder();
    if (seen != null && data.consumeBoolean()) {
      ref.setId(seen.getId()).setEpoch(seen.getEpoch()).setShard(seen.getShard());
    } else {
      ref.setId(data.consumeLong()).setEpoch(data.consumeLong()).setShard(data.consumeString(8));
    }
    return switch (data.consumeInt(0, 2)) {
      case 0 -> ReceiverMessage.newBuilder().setAcks(Acks.newBuilder().addEvents(ref)).build();
      case 1 ->
          ReceiverMessage.newBuilder()
              .setNacks(
                  Nacks.newBuilder()
                      .addNacks(
                          Nack.newBuilder()
                              .setEvent(ref)
                              .setRetryAfterMs(data.consumeLong(0, 1000))
                              .setReason(data.consumeString(50))))
              .build();
      default ->
          ReceiverMessage.newBuilder()
              .setFlow(Flow.newBuilder().setMaxInFlight(data.consumeInt()))
              .build();
    };
  }
}
