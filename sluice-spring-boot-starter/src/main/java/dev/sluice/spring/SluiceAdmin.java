package dev.sluice.spring;

import dev.sluice.proto.v1.AdminCancelRequest;
import dev.sluice.proto.v1.AdminGrpc;
import dev.sluice.proto.v1.AdminListQueuesRequest;
import dev.sluice.proto.v1.AdminQueue;
import dev.sluice.proto.v1.DeadChangeRequest;
import dev.sluice.proto.v1.DeadChangeResponse;
import dev.sluice.proto.v1.ListDeadRequest;
import dev.sluice.proto.v1.ListDeadResponse;
import dev.sluice.proto.v1.ListReceiversRequest;
import dev.sluice.proto.v1.PauseRequest;
import dev.sluice.proto.v1.ReceiverInfo;
import dev.sluice.proto.v1.ShowEventRequest;
import dev.sluice.proto.v1.ShowEventResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The managers' admin API ({@code sluice.v1.Admin}) for an application's own admin page: queues
 * with their counts, dead events with their reasons, replay, purge, cancel, pause and resume. A
 * small client over the generated stub, on the listeners' connection settings (targets, TLS,
 * token); each call needs the matching grant of the token or certificate ({@code admin}, or {@code
 * stats}, {@code replay}, {@code purge}, {@code cancel}, {@code pause}) and is audited by the
 * manager.
 *
 * <p>Where a call goes: the queues' data and pause switches live in the database, so any manager
 * answers; each call goes to the first target, then the next ones while a manager is UNAVAILABLE.
 * {@link #listReceivers} asks every target (each manager knows its own streams). Requests and
 * answers are the proto messages of {@code sluice/v1/admin.proto}. Failures are {@link
 * SluiceAdminException}s naming the call, queue, shard and ids.
 *
 * <p>Threads: any thread may call it; a channel per target is opened at its first use (the first
 * target's at construction, so that bad TLS settings fail the startup) and closed by {@link #close}
 * (the bean's destruction).
 */
public class SluiceAdmin implements AutoCloseable {
  private final List<String> targets;
  private final Function<String, ManagedChannel> opener;
  private final Duration timeout;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

  SluiceAdmin(List<String> targets, Function<String, ManagedChannel> opener, Duration timeout) {
    if (targets.isEmpty()) {
      throw new IllegalStateException("SluiceAdmin needs at least one manager target");
    }
    this.targets = List.copyOf(targets);
    this.opener = opener;
    this.timeout = timeout;
    // The first channel now (it connects at its first call): bad TLS settings fail the startup.
    channels.computeIfAbsent(this.targets.get(0), opener);
  }

  /** Every queue per shard with its status, pause switch and (with {@code stats}) counts. */
  public List<AdminQueue> listQueues() {
    return call("listQueues", s -> s.listQueues(AdminListQueuesRequest.getDefaultInstance()))
        .getQueuesList();
  }

  /** One page of a queue's dead events; keep paging with {@code next_page_token}. */
  public ListDeadResponse listDead(ListDeadRequest request) {
    return call(
        "listDead on queue '" + request.getQueue() + "' shard '" + request.getShard() + "'",
        s -> s.listDead(request));
  }

  /** One event, whatever its state. */
  public ShowEventResponse showEvent(String queue, String shard, long id) {
    return call(
        "showEvent on queue '" + queue + "' shard '" + nz(shard) + "' id " + id,
        s ->
            s.showEvent(
                ShowEventRequest.newBuilder()
                    .setQueue(queue)
                    .setShard(nz(shard))
                    .setId(id)
                    .build()));
  }

  /** Dead events back to pending, due now ({@code shard} null when the manager has one shard). */
  public DeadChangeResponse replay(String queue, String shard, List<Long> ids) {
    return replay(deadChange(queue, shard, ids));
  }

  /** Replays the request's ids, or every dead event matching its filter with {@code all}. */
  public DeadChangeResponse replay(DeadChangeRequest request) {
    return call(describe("replay", request), s -> s.replay(request));
  }

  /** Deletes dead events. */
  public DeadChangeResponse purge(String queue, String shard, List<Long> ids) {
    return purge(deadChange(queue, shard, ids));
  }

  /** Deletes the request's ids, or every dead event matching its filter with {@code all}. */
  public DeadChangeResponse purge(DeadChangeRequest request) {
    return call(describe("purge", request), s -> s.purge(request));
  }

  /** Pending events to cancelled. */
  public DeadChangeResponse cancel(String queue, String shard, List<Long> ids) {
    return call(
        "cancel on queue '" + queue + "' shard '" + nz(shard) + "' ids " + ids,
        s ->
            s.cancel(
                AdminCancelRequest.newBuilder()
                    .setQueue(queue)
                    .setShard(nz(shard))
                    .addAllIds(ids)
                    .build()));
  }

  /**
   * Nothing new of the queue is dispatched ({@code shard} null: every shard); returns the shards
   * paused. Events out already may still be acked.
   */
  public List<String> pause(String queue, String shard) {
    PauseRequest r = PauseRequest.newBuilder().setQueue(queue).setShard(nz(shard)).build();
    return call("pause on queue '" + queue + "' shard '" + nz(shard) + "'", s -> s.pause(r))
        .getShardsList();
  }

  /** The opposite of {@link #pause}. */
  public List<String> resume(String queue, String shard) {
    PauseRequest r = PauseRequest.newBuilder().setQueue(queue).setShard(nz(shard)).build();
    return call("resume on queue '" + queue + "' shard '" + nz(shard) + "'", s -> s.resume(r))
        .getShardsList();
  }

  /** The receiver streams of the queue ({@code null}: every queue) on every manager. */
  public List<ReceiverInfo> listReceivers(String queue) {
    ListReceiversRequest r = ListReceiversRequest.newBuilder().setQueue(nz(queue)).build();
    List<ReceiverInfo> out = new ArrayList<>();
    for (String target : targets) {
      try {
        out.addAll(stub(target).listReceivers(r).getReceiversList());
      } catch (StatusRuntimeException ex) {
        if (ex.getStatus().getCode() != Status.Code.UNAVAILABLE) {
          throw new SluiceAdminException(
              "listReceivers on queue '" + nz(queue) + "' at " + target, ex.getStatus(), ex);
        }
      }
    }
    return out;
  }

  @Override
  public void close() {
    for (ManagedChannel c : channels.values()) {
      c.shutdownNow();
    }
    channels.clear();
  }

  private <T> T call(String what, Function<AdminGrpc.AdminBlockingStub, T> rpc) {
    StatusRuntimeException last = null;
    for (String target : targets) {
      try {
        return rpc.apply(stub(target));
      } catch (StatusRuntimeException ex) {
        if (ex.getStatus().getCode() != Status.Code.UNAVAILABLE) {
          throw new SluiceAdminException(what, ex.getStatus(), ex);
        }
        last = ex;
      }
    }
    throw new SluiceAdminException(
        what + " (no manager answered of " + targets + ")", last.getStatus(), last);
  }

  private AdminGrpc.AdminBlockingStub stub(String target) {
    return AdminGrpc.newBlockingStub(channels.computeIfAbsent(target, opener))
        .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static DeadChangeRequest deadChange(String queue, String shard, List<Long> ids) {
    return DeadChangeRequest.newBuilder()
        .setQueue(queue)
        .setShard(nz(shard))
        .addAllIds(ids)
        .build();
  }

  private static String describe(String call, DeadChangeRequest r) {
    return call
        + " on queue '"
        + r.getQueue()
        + "' shard '"
        + r.getShard()
        + "' "
        + (r.getAll() ? "all matching" : "ids " + r.getIdsList());
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
