package dev.sluice.examples.demo;

import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.CancelResponse;
import dev.sluice.proto.v1.CancelResult;
import dev.sluice.proto.v1.CancelStatus;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Cancels pending events through the managers' Cancel RPC, as an application would. The request
 * names the event's shard, so any manager configured with that shard can apply it; with several
 * managers, one that is unreachable (killed, restarting) is skipped for the next.
 */
final class Canceller implements AutoCloseable {
  private final String queue;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<SluiceGrpc.SluiceBlockingStub> stubs = new ArrayList<>();
  private int next;

  Canceller(List<String> targets, String queue) {
    this(targets, queue, t -> ManagedChannelBuilder.forTarget(t).usePlaintext().build(), s -> s);
  }

  /**
   * @param open opens the channel to one target (e.g. with TLS)
   * @param auth adds credentials to a stub (e.g. a bearer token)
   */
  Canceller(
      List<String> targets,
      String queue,
      java.util.function.Function<String, ManagedChannel> open,
      java.util.function.UnaryOperator<SluiceGrpc.SluiceBlockingStub> auth) {
    this.queue = queue;
    for (String t : targets) {
      ManagedChannel ch = open.apply(t);
      channels.add(ch);
      stubs.add(auth.apply(SluiceGrpc.newBlockingStub(ch)));
    }
  }

  /**
   * The managers' answer for one event. A call that failed on every manager is reported as
   * UNSPECIFIED: nothing was promised, so the event must still be delivered.
   */
  CancelStatus cancel(EventKey event) {
    CancelRequest req =
        CancelRequest.newBuilder()
            .setQueue(queue)
            .setShard(event.shard())
            .addIds(event.id())
            .build();
    int start;
    synchronized (this) {
      start = next;
      next = (next + 1) % stubs.size();
    }
    for (int i = 0; i < stubs.size(); i++) {
      SluiceGrpc.SluiceBlockingStub stub = stubs.get((start + i) % stubs.size());
      try {
        CancelResponse r = stub.withDeadlineAfter(5, TimeUnit.SECONDS).cancel(req);
        for (CancelResult result : r.getResultsList()) {
          if (result.getId() == event.id()) {
            return result.getStatus();
          }
        }
        return CancelStatus.CANCEL_STATUS_UNSPECIFIED;
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
          return CancelStatus.CANCEL_STATUS_UNSPECIFIED;
        }
        // That manager is down (or its database is): try the next one.
      }
    }
    return CancelStatus.CANCEL_STATUS_UNSPECIFIED;
  }

  @Override
  public void close() {
    for (ManagedChannel channel : channels) {
      channel.shutdown();
    }
    for (ManagedChannel channel : channels) {
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
}
