package dev.sluice.manager.grpc;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.StateCounts;
import dev.sluice.manager.admin.CountsCache;
import dev.sluice.manager.channel.ChannelOutlets;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.AuthInterceptor;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.StreamGuard;
import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.CancelResponse;
import dev.sluice.proto.v1.CancelResult;
import dev.sluice.proto.v1.CancelStatus;
import dev.sluice.proto.v1.ListQueuesRequest;
import dev.sluice.proto.v1.ListQueuesResponse;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.NotifyShutdownRequest;
import dev.sluice.proto.v1.NotifyShutdownResponse;
import dev.sluice.proto.v1.QueueInfo;
import dev.sluice.proto.v1.QueueStatsEntry;
import dev.sluice.proto.v1.QueueStatsRequest;
import dev.sluice.proto.v1.QueueStatsResponse;
import dev.sluice.proto.v1.ReceiverMessage;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.LinkedHashSet;
import java.util.Map;

/**
 * The sluice.v1 service: a thin layer that validates requests and hands them to the engine. Every
 * call runs as the principal {@link AuthInterceptor} found; each checks that principal's grant
 * before it looks at the queue, so a denied call learns nothing about it.
 */
public final class SluiceService extends SluiceGrpc.SluiceImplBase {
  static final int MAX_CANCEL_IDS = 10_000;

  private final QueueEngine engine;
  private final StreamGuard guard;

  /** QueueStats' table counts, at most one a second per queue (see {@link CountsCache}). */
  private final CountsCache counts;

  private final ChannelOutlets channels;

  public SluiceService(
      QueueEngine engine, StreamGuard guard, ChannelOutlets channels, CountsCache counts) {
    this.engine = engine;
    this.guard = guard;
    this.channels = channels;
    this.counts = counts;
  }

  @Override
  public StreamObserver<ReceiverMessage> subscribe(StreamObserver<ManagerMessage> out) {
    return new SubscribeCall(
        engine,
        (ServerCallStreamObserver<ManagerMessage>) out,
        guard.open(AuthInterceptor.principal()),
        channels);
  }

  /** Throws PERMISSION_DENIED (and counts it) unless the caller may do {@code a} on the queue. */
  private Principal require(String queue, Action a) {
    Principal p = AuthInterceptor.principal();
    if (!p.allows(queue, a)) {
      guard.denials().deny(p.name(), "permission", a.configName() + " on queue " + queue);
      throw Status.PERMISSION_DENIED
          .withDescription(
              "principal " + p.name() + " may not " + a.configName() + " on queue '" + queue + "'")
          .asRuntimeException();
    }
    return p;
  }

  @Override
  public void cancel(CancelRequest req, StreamObserver<CancelResponse> out) {
    Statuses.unary(
        out,
        "cancel on queue " + req.getQueue(),
        () -> {
          Statuses.checkQueueName(req.getQueue());
          if (req.getIdsCount() == 0 || req.getIdsCount() > MAX_CANCEL_IDS) {
            throw Statuses.invalid(
                "cancel: give 1.." + MAX_CANCEL_IDS + " ids, got " + req.getIdsCount());
          }
          if (req.getQueue().isBlank()) {
            throw Statuses.invalid("queue is required");
          }
          Principal p = require(req.getQueue(), Action.CANCEL);
          // The grant's tenants apply: another tenant's event is answered as an unknown id.
          java.util.Set<String> tenants = p.tenantsFor(req.getQueue(), Action.CANCEL);
          Map<Long, CasOutcome> r =
              engine.cancel(
                  req.getQueue(),
                  req.getShard(),
                  new LinkedHashSet<>(req.getIdsList()),
                  tenants == null ? t -> true : tenants::contains);
          CancelResponse.Builder b = CancelResponse.newBuilder();
          r.forEach(
              (id, o) ->
                  b.addResults(
                      CancelResult.newBuilder()
                          .setId(id)
                          .setStatus(
                              switch (o) {
                                case APPLIED -> CancelStatus.CANCEL_STATUS_CANCELLED;
                                case STALE -> CancelStatus.CANCEL_STATUS_NOT_PENDING;
                                case UNKNOWN -> CancelStatus.CANCEL_STATUS_UNKNOWN;
                              })));
          return b.build();
        });
  }

  @Override
  public void notifyShutdown(
      NotifyShutdownRequest req, StreamObserver<NotifyShutdownResponse> out) {
    Statuses.unary(
        out,
        "notify shutdown of receiver " + req.getReceiverId(),
        () -> {
          if (req.getReceiverId().isBlank()) {
            throw Statuses.invalid("notify shutdown: receiver_id is required");
          }
          // Receiver ids are the caller's own: only its streams of that id are drained.
          Principal p = AuthInterceptor.principal();
          int n = engine.drainReceiver(req.getReceiverId(), p.name());
          for (QueueManager q : engine.served()) {
            q.drainReceiver(req.getReceiverId(), p.name());
          }
          return NotifyShutdownResponse.newBuilder().setStreams(n).build();
        });
  }

  @Override
  public void listQueues(ListQueuesRequest req, StreamObserver<ListQueuesResponse> out) {
    Statuses.unary(
        out,
        "list queues",
        () -> {
          Principal p = AuthInterceptor.principal();
          ListQueuesResponse.Builder b = ListQueuesResponse.newBuilder();
          for (QueueManager q : engine.served()) {
            if (!p.sees(q.queue())) {
              continue;
            }
            b.addQueues(
                QueueInfo.newBuilder()
                    .setName(q.queue())
                    .setShard(q.shard())
                    .setStatus("SERVING")
                    .putAllOptions(q.table().options().asMap()));
          }
          for (ShardManager s : engine.shards()) {
            s.disabled()
                .forEach(
                    (name, problem) -> {
                      if (p.sees(name)) {
                        b.addQueues(
                            QueueInfo.newBuilder()
                                .setName(name)
                                .setShard(s.name())
                                .setStatus("DISABLED")
                                .setProblem(problem));
                      }
                    });
          }
          return b.build();
        });
  }

  @Override
  public void queueStats(QueueStatsRequest req, StreamObserver<QueueStatsResponse> out) {
    Statuses.unary(
        out,
        "queue stats",
        () -> {
          Statuses.checkQueueName(req.getQueue());
          Principal p = AuthInterceptor.principal();
          if (!req.getQueue().isEmpty()) {
            require(req.getQueue(), Action.STATS);
            queueOrThrow(req.getQueue());
          }
          QueueStatsResponse.Builder b = QueueStatsResponse.newBuilder();
          for (QueueManager q : engine.served()) {
            if (!req.getQueue().isEmpty() && !req.getQueue().equals(q.queue())) {
              continue;
            }
            if (!p.allows(q.queue(), Action.STATS)) {
              continue;
            }
            StateCounts c = counts.counts(q);
            QueueManager.LiveStats live = q.live();
            long now = q.nowNs();
            b.addQueues(
                QueueStatsEntry.newBuilder()
                    .setQueue(q.queue())
                    .setShard(q.shard())
                    .setPending(c.pending())
                    .setFired(c.fired())
                    .setAcked(c.acked())
                    .setDead(c.dead())
                    .setCancelled(c.cancelled())
                    .setCached(live.cached())
                    .setInFlight(live.inFlight())
                    .setReceivers(live.receivers())
                    .setOldestDueAgeMs(
                        c.pending() == 0 || c.oldestDueNs() > now
                            ? 0
                            : (now - c.oldestDueNs()) / 1_000_000));
          }
          return b.build();
        });
  }

  private QueueManager queueOrThrow(String name) {
    if (name.isBlank()) {
      throw Statuses.invalid("queue is required");
    }
    return engine
        .find(name)
        .orElseThrow(
            () ->
                engine
                    .problem(name)
                    .map(p -> Status.FAILED_PRECONDITION.withDescription(p).asRuntimeException())
                    .orElseGet(
                        () ->
                            Status.NOT_FOUND
                                .withDescription("queue '" + name + "' is not served here")
                                .asRuntimeException()));
  }
}
