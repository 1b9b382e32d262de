package dev.sluice.manager.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.sluice.db.KeyRange;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Value;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayList;
import java.util.List;
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
    ReceiverStream r = new ReceiverStream(subscription(sent), "s1");
    OutgoingBatches b = new OutgoingBatches(10_000);
    for (int i = 0; i < 7; i++) {
      b.add(r, event(i, 3_000));
    }
    assertThat(b.sendAll()).isEqualTo(3);
    assertThat(sent).allMatch(m -> m.getSerializedSize() <= 10_000);
    assertThat(sent.stream().map(m -> m.getEvents().getEventsCount()).toList())
        .containsExactly(3, 3, 1);
    assertThat(sent.stream().flatMap(m -> m.getEvents().getEventsList().stream()).map(Event::getId))
        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
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
