package dev.sluice.manager.grpc;

import dev.sluice.manager.admin.AdminActions;
import dev.sluice.manager.security.AuthInterceptor;
import dev.sluice.manager.security.Principal;
import dev.sluice.proto.v1.AdminCancelRequest;
import dev.sluice.proto.v1.AdminGrpc;
import dev.sluice.proto.v1.AdminListQueuesRequest;
import dev.sluice.proto.v1.AdminListQueuesResponse;
import dev.sluice.proto.v1.AdminQueue;
import dev.sluice.proto.v1.DeadChangeRequest;
import dev.sluice.proto.v1.DeadChangeResponse;
import dev.sluice.proto.v1.DeadEvent;
import dev.sluice.proto.v1.DeadFilter;
import dev.sluice.proto.v1.HaltedKey;
import dev.sluice.proto.v1.ListDeadRequest;
import dev.sluice.proto.v1.ListDeadResponse;
import dev.sluice.proto.v1.ListHaltedRequest;
import dev.sluice.proto.v1.ListHaltedResponse;
import dev.sluice.proto.v1.ListReceiversRequest;
import dev.sluice.proto.v1.ListReceiversResponse;
import dev.sluice.proto.v1.PauseRequest;
import dev.sluice.proto.v1.PauseResponse;
import dev.sluice.proto.v1.ReceiverInfo;
import dev.sluice.proto.v1.ShowEventRequest;
import dev.sluice.proto.v1.ShowEventResponse;
import dev.sluice.proto.v1.SkipDeadRequest;
import dev.sluice.proto.v1.Unchanged;
import io.grpc.stub.StreamObserver;

/**
 * The sluice.v1.Admin service: translates requests to {@link AdminActions} calls (which check the
 * grants, the bounds and write the audit) and their results back. Runs on the gRPC executor, behind
 * the server's {@link AuthInterceptor}.
 */
public final class AdminService extends AdminGrpc.AdminImplBase {
  private final AdminActions admin;

  public AdminService(AdminActions admin) {
    this.admin = admin;
  }

  @Override
  public void listQueues(AdminListQueuesRequest req, StreamObserver<AdminListQueuesResponse> out) {
    Statuses.unary(
        out,
        "admin list queues",
        () -> {
          AdminListQueuesResponse.Builder b = AdminListQueuesResponse.newBuilder();
          for (AdminActions.QueueSummary q : admin.listQueues(principal())) {
            AdminQueue.Builder a =
                AdminQueue.newBuilder()
                    .setName(q.queue())
                    .setShard(q.shard())
                    .setStatus(q.status())
                    .setProblem(q.problem())
                    .setPaused(q.paused());
            if (q.counts() != null) {
              a.setHasCounts(true)
                  .setPending(q.counts().pending())
                  .setFired(q.counts().fired())
                  .setAcked(q.counts().acked())
                  .setDead(q.counts().dead())
                  .setCancelled(q.counts().cancelled());
            }
            b.addQueues(a);
          }
          return b.build();
        });
  }

  @Override
  public void listDead(ListDeadRequest req, StreamObserver<ListDeadResponse> out) {
    Statuses.unary(
        out,
        "admin list dead of queue " + req.getQueue(),
        () -> {
          AdminActions.DeadPage page =
              admin.listDead(
                  principal(),
                  req.getQueue(),
                  req.getShard(),
                  filter(req.getFilter()),
                  req.getPageSize(),
                  req.hasAfterId()
                      ? AdminActions.pageTokenAfter(req.getAfterId())
                      : req.getPageToken());
          ListDeadResponse.Builder b = ListDeadResponse.newBuilder();
          for (AdminActions.DeadEvent e : page.events()) {
            b.addEvents(
                DeadEvent.newBuilder()
                    .setQueue(e.queue())
                    .setShard(e.shard())
                    .setId(e.id())
                    .setAttempts(e.attempts())
                    .setTenant(e.tenant())
                    .setTimeCreatedNs(e.timeCreatedNs())
                    .setReason(e.reason())
                    .putAllColumns(Values.toWire(e.columns())));
          }
          if (page.nextPageToken() != null) {
            b.setNextPageToken(page.nextPageToken());
          }
          b.setServerTimeNs(admin.serverTimeNs(req.getShard()));
          return b.build();
        });
  }

  @Override
  public void showEvent(ShowEventRequest req, StreamObserver<ShowEventResponse> out) {
    Statuses.unary(
        out,
        "admin show event " + req.getId() + " of queue " + req.getQueue(),
        () -> {
          AdminActions.EventDetail e =
              admin.showEvent(principal(), req.getQueue(), req.getShard(), req.getId());
          return ShowEventResponse.newBuilder()
              .setQueue(e.queue())
              .setShard(e.shard())
              .setId(e.id())
              .setState(e.state())
              .setEpoch(e.epoch())
              .setTenant(e.tenant())
              .setPriority(e.priority())
              .setTimeCreatedNs(e.timeCreatedNs())
              .setTimeNextNs(e.timeNextNs())
              .setTimeDeadlineNs(e.deadlineNs())
              .setReason(e.reason())
              .putAllColumns(Values.toWire(e.columns()))
              .build();
        });
  }

  @Override
  public void replay(DeadChangeRequest req, StreamObserver<DeadChangeResponse> out) {
    Statuses.unary(
        out,
        "admin replay on queue " + req.getQueue(),
        () -> {
          checkAllOrIds(req);
          return change(
              req.getAll()
                  ? admin.replayAll(
                      principal(), req.getQueue(), req.getShard(), filter(req.getFilter()))
                  : admin.replay(principal(), req.getQueue(), req.getShard(), req.getIdsList()));
        });
  }

  @Override
  public void purge(DeadChangeRequest req, StreamObserver<DeadChangeResponse> out) {
    Statuses.unary(
        out,
        "admin purge on queue " + req.getQueue(),
        () -> {
          checkAllOrIds(req);
          return change(
              req.getAll()
                  ? admin.purgeAll(
                      principal(), req.getQueue(), req.getShard(), filter(req.getFilter()))
                  : admin.purge(principal(), req.getQueue(), req.getShard(), req.getIdsList()));
        });
  }

  @Override
  public void cancel(AdminCancelRequest req, StreamObserver<DeadChangeResponse> out) {
    Statuses.unary(
        out,
        "admin cancel on queue " + req.getQueue(),
        () -> change(admin.cancel(principal(), req.getQueue(), req.getShard(), req.getIdsList())));
  }

  @Override
  public void pause(PauseRequest req, StreamObserver<PauseResponse> out) {
    Statuses.unary(
        out,
        "admin pause of queue " + req.getQueue(),
        () ->
            PauseResponse.newBuilder()
                .addAllShards(admin.pause(principal(), req.getQueue(), req.getShard()).shards())
                .build());
  }

  @Override
  public void resume(PauseRequest req, StreamObserver<PauseResponse> out) {
    Statuses.unary(
        out,
        "admin resume of queue " + req.getQueue(),
        () ->
            PauseResponse.newBuilder()
                .addAllShards(admin.resume(principal(), req.getQueue(), req.getShard()).shards())
                .build());
  }

  @Override
  public void listReceivers(ListReceiversRequest req, StreamObserver<ListReceiversResponse> out) {
    Statuses.unary(
        out,
        "admin list receivers",
        () -> {
          ListReceiversResponse.Builder b = ListReceiversResponse.newBuilder();
          for (AdminActions.ReceiverView r : admin.listReceivers(principal(), req.getQueue())) {
            b.addReceivers(
                ReceiverInfo.newBuilder()
                    .setQueue(r.queue())
                    .setShard(r.shard())
                    .setReceiverId(r.receiverId())
                    .setInFlight(r.inFlight())
                    .setMaxInFlight(r.maxInFlight())
                    .setDraining(r.draining()));
          }
          return b.build();
        });
  }

  @Override
  public void listHalted(ListHaltedRequest req, StreamObserver<ListHaltedResponse> out) {
    Statuses.unary(
        out,
        "admin list halted keys of queue " + req.getQueue(),
        () -> {
          AdminActions.HaltedKeys h =
              admin.listHalted(principal(), req.getQueue(), req.getShard(), req.getLimit());
          ListHaltedResponse.Builder b =
              ListHaltedResponse.newBuilder().setHalting(h.halting()).setShard(h.shard());
          for (dev.sluice.db.store.HaltedKey k : h.keys()) {
            b.addKeys(
                HaltedKey.newBuilder()
                    .setKey(k.key())
                    .setDeadId(k.deadId())
                    .setWaiting(k.waiting()));
          }
          return b.build();
        });
  }

  @Override
  public void skipDead(SkipDeadRequest req, StreamObserver<DeadChangeResponse> out) {
    Statuses.unary(
        out,
        "admin skip dead on queue " + req.getQueue(),
        () ->
            change(admin.skipDead(principal(), req.getQueue(), req.getShard(), req.getIdsList())));
  }

  private static void checkAllOrIds(DeadChangeRequest req) {
    if (req.getAll() && req.getIdsCount() > 0) {
      throw Statuses.invalid("ids: give ids or set all, not both (queue " + req.getQueue() + ")");
    }
  }

  private static DeadChangeResponse change(AdminActions.ChangeResult r) {
    DeadChangeResponse.Builder b = DeadChangeResponse.newBuilder().setChanged(r.changed());
    for (AdminActions.Unchanged u : r.unchanged()) {
      b.addUnchanged(Unchanged.newBuilder().setId(u.id()).setWhy(u.why()));
    }
    return b.build();
  }

  private static AdminActions.DeadFilter filter(DeadFilter f) {
    return new AdminActions.DeadFilter(
        f.getReasonContains(), f.getTenant(), f.getCreatedFromNs(), f.getCreatedBeforeNs());
  }

  private static Principal principal() {
    return AuthInterceptor.principal();
  }
}
