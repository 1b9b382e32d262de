package dev.sluice.examples.demo;

import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.CancelResponse;
import dev.sluice.proto.v1.CancelResult;
import dev.sluice.proto.v1.CancelStatus;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.TimeUnit;

/** Cancels pending events through the manager's Cancel RPC, as an application would. */
final class Canceller implements AutoCloseable {
  private final String queue;
  private final ManagedChannel channel;
  private final SluiceGrpc.SluiceBlockingStub stub;

  Canceller(String target, String queue) {
    this.queue = queue;
    this.channel = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
    this.stub = SluiceGrpc.newBlockingStub(channel);
  }

  /**
   * The manager's answer for one event. A failed call is reported as UNSPECIFIED: nothing was
   * promised, so the event must still be delivered.
   */
  CancelStatus cancel(long eventId) {
    try {
      CancelResponse r =
          stub.withDeadlineAfter(5, TimeUnit.SECONDS)
              .cancel(CancelRequest.newBuilder().setQueue(queue).addIds(eventId).build());
      for (CancelResult result : r.getResultsList()) {
        if (result.getId() == eventId) {
          return result.getStatus();
        }
      }
      return CancelStatus.CANCEL_STATUS_UNSPECIFIED;
    } catch (StatusRuntimeException e) {
      return CancelStatus.CANCEL_STATUS_UNSPECIFIED;
    }
  }

  @Override
  public void close() {
    channel.shutdown();
    try {
      if (!channel.awaitTermination(2, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      channel.shutdownNow();
    }
  }
}
