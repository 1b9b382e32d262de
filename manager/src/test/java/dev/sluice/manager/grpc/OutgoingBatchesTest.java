package dev.sluice.manager.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.KeyRange;
import dev.sluice.db.QueueOptions;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Value;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OutgoingBatchesTest {
  static Event event(long id, int payload) {
    return Event.newBuilder()
        .setId(id)
        .putColumns(
            "payload",
            Value.newBuilder().setBytesValue(ByteString.copyFrom(new byte[payload])).build())
        .build();
  }

  @Test
  void aMessageNeverExceedsTheLimitAndEventsKeepTheirOrder() {
    List<ManagerMessage> sent = new ArrayList<>();
    OutgoingBatches b = new OutgoingBatches(10_000);
    for (int i = 0; i < 7; i++) {
      b.add(event(i, 3_000));
    }
    sent.addAll(b.all());
    assertThat(sent).hasSize(3);
    assertThat(sent).allMatch(m -> m.getSerializedSize() <= 10_000);
    assertThat(sent.stream().map(m -> m.getEvents().getEventsCount()).toList())
        .containsExactly(3, 3, 1);
    assertThat(sent.stream().flatMap(m -> m.getEvents().getEventsList().stream()).map(Event::getId))
        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
  }

  @Test
  void aDeliveryOfLargeEventsIsSplitIntoMessagesUnderTheLimitInOrder() {
    List<ManagerMessage> sent = new ArrayList<>();
    Subscription sub = subscription(sent);
    List<Delivery> batch = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      batch.add(
          new Delivery(
              "s1",
              "q",
              i,
              1,
              "",
              0,
              0,
              0,
              0,
              "",
              List.of(),
              Map.of("payload", new byte[1024 * 1024])));
    }
    sub.deliver("s1", batch);
    assertThat(sent).hasSizeGreaterThan(2);
    assertThat(sent).allMatch(m -> m.getSerializedSize() <= QueueOptions.MAX_MESSAGE_BYTES);
    assertThat(sent.stream().flatMap(m -> m.getEvents().getEventsList().stream()).map(Event::getId))
        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
    assertThat(sent.get(0).getEvents().getEvents(0).getColumnsMap().get("payload").getBytesValue())
        .hasSize(1024 * 1024);
  }

  static Subscription subscription(List<ManagerMessage> sent) {
    ServerCallStreamObserver<ManagerMessage> out =
        new ServerCallStreamObserver<>() {
          @Override
          public void onNext(ManagerMessage m) {
            sent.add(m);
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}

          @Override
          public boolean isCancelled() {
            return false;
          }

          @Override
          public void setOnCancelHandler(Runnable r) {}

          @Override
          public void setCompression(String c) {}

          @Override
          public boolean isReady() {
            return true;
          }

          @Override
          public void setOnReadyHandler(Runnable r) {}

          @Override
          public void request(int n) {}

          @Override
          public void setMessageCompression(boolean enable) {}

          @Override
          public void disableAutoInboundFlowControl() {}
        };
    return new Subscription("r", "q", KeyRange.ALL, 1, 10, out);
  }
}
