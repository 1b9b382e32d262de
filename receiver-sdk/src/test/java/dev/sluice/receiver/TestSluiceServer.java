package dev.sluice.receiver;

import dev.sluice.proto.v1.AckResult;
import dev.sluice.proto.v1.AckResults;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Acks;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.EventBatch;
import dev.sluice.proto.v1.EventRef;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Nack;
import dev.sluice.proto.v1.Nacks;
import dev.sluice.proto.v1.NotifyShutdownRequest;
import dev.sluice.proto.v1.NotifyShutdownResponse;
import dev.sluice.proto.v1.ReceiverMessage;
import dev.sluice.proto.v1.ShardChange;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.proto.v1.Subscribe;
import dev.sluice.proto.v1.Subscribed;
import dev.sluice.proto.v1.Value;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A fake manager on a real loopback port: records every message a receiver sends (in one timeline,
 * to check ordering) and lets the test push events and break streams. Several can run at once, one
 * per manager process; {@link #close()} then a new instance on the same {@link #port()} plays a
 * manager that went down and came back.
 */
final class TestSluiceServer extends SluiceGrpc.SluiceImplBase implements AutoCloseable {
  final List<String> timeline = new CopyOnWriteArrayList<>();
  final List<Subscribe> subscribes = new CopyOnWriteArrayList<>();
  final List<Acks> ackMessages = new CopyOnWriteArrayList<>();
  final List<Nacks> nackMessages = new CopyOnWriteArrayList<>();
  final List<String> notified = new CopyOnWriteArrayList<>();
  final List<Status> streamEnds = new CopyOnWriteArrayList<>();

  /** How acks and nacks are answered. */
  volatile AckStatus answer = AckStatus.ACK_STATUS_OK;

  /** While false, acks and nacks are recorded but not answered. */
  volatile boolean answerAcks = true;

  /** While true, Subscribe is not answered until {@link #releaseSubscribed()}. */
  volatile boolean holdSubscribed;

  /** When set, every Subscribe is answered with this error, as a manager not serving the queue. */
  volatile Status refuseSubscribe;

  private final Server server;
  private volatile Stream current;

  TestSluiceServer() throws IOException {
    this(0);
  }

  /** Listens on {@code port} (0 = any free one). */
  TestSluiceServer(int port) throws IOException {
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
            .withOption(ChannelOption.SO_REUSEADDR, true)
            .addService(this)
            .build()
            .start();
  }

  int port() {
    return server.getPort();
  }

  String target() {
    return "127.0.0.1:" + server.getPort();
  }

  /** Ids of every event acked on this server. */
  List<Long> ackedIds() {
    return acked().stream().map(EventRef::getId).toList();
  }

  List<EventRef> acked() {
    List<EventRef> refs = new ArrayList<>();
    ackMessages.forEach(m -> refs.addAll(m.getEventsList()));
    return refs;
  }

  List<Nack> nacks() {
    List<Nack> all = new ArrayList<>();
    nackMessages.forEach(m -> all.addAll(m.getNacksList()));
    return all;
  }

  static Event event(long id, long epoch) {
    return Event.newBuilder()
        .setId(id)
        .setEpoch(epoch)
        .setQueue("q")
        .putColumns("payload", Value.newBuilder().setStringValue("p" + id).build())
        .build();
  }

  /** Pushes one EventBatch on the newest stream. */
  void push(Event... events) {
    current.send(
        ManagerMessage.newBuilder()
            .setEvents(EventBatch.newBuilder().addAllEvents(List.of(events)))
            .build());
  }

  /** Tells the newest stream that this manager started or stopped serving a shard. */
  void pushShardChange(String shard, boolean serving) {
    current.send(
        ManagerMessage.newBuilder()
            .setShardChange(
                ShardChange.newBuilder().setQueue("q").setShard(shard).setServing(serving))
            .build());
  }

  /** Ends the newest stream with an error, as a crashing or restarting manager would. */
  void breakStream(Status status) {
    current.fail(status);
  }

  void releaseSubscribed() {
    holdSubscribed = false;
    current.sendSubscribed();
  }

  @Override
  public void notifyShutdown(
      NotifyShutdownRequest request, StreamObserver<NotifyShutdownResponse> response) {
    notified.add(request.getReceiverId());
    timeline.add("notify:" + request.getReceiverId());
    response.onNext(NotifyShutdownResponse.getDefaultInstance());
    response.onCompleted();
  }

  @Override
  public StreamObserver<ReceiverMessage> subscribe(StreamObserver<ManagerMessage> out) {
    Stream stream = new Stream(out);
    current = stream;
    return stream;
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
  }

  /** One Subscribe stream; the server side's observer is not thread-safe either. */
  private final class Stream implements StreamObserver<ReceiverMessage> {
    private final StreamObserver<ManagerMessage> out;
    private Subscribe subscribe;
    private boolean done;

    Stream(StreamObserver<ManagerMessage> out) {
      this.out = out;
    }

    synchronized void send(ManagerMessage message) {
      if (!done) {
        out.onNext(message);
      }
    }

    synchronized void fail(Status status) {
      if (!done) {
        done = true;
        out.onError(status.asRuntimeException());
      }
    }

    synchronized void sendSubscribed() {
      send(
          ManagerMessage.newBuilder()
              .setSubscribed(
                  Subscribed.newBuilder()
                      .setQueue(subscribe.getQueue())
                      .setShard("s0")
                      .setReceiverId(subscribe.getReceiverId())
                      .setMaxInFlight(subscribe.getMaxInFlight()))
              .build());
    }

    @Override
    public void onNext(ReceiverMessage message) {
      switch (message.getKindCase()) {
        case SUBSCRIBE -> {
          synchronized (this) {
            subscribe = message.getSubscribe();
          }
          subscribes.add(message.getSubscribe());
          timeline.add("subscribe:" + message.getSubscribe().getReceiverId());
          Status refuse = refuseSubscribe;
          if (refuse != null) {
            fail(refuse);
          } else if (!holdSubscribed) {
            sendSubscribed();
          }
        }
        case ACKS -> {
          ackMessages.add(message.getAcks());
          message.getAcks().getEventsList().forEach(r -> timeline.add("ack:" + r.getId()));
          answer(message.getAcks().getEventsList());
        }
        case NACKS -> {
          nackMessages.add(message.getNacks());
          List<EventRef> refs = new ArrayList<>();
          for (Nack n : message.getNacks().getNacksList()) {
            timeline.add("nack:" + n.getEvent().getId());
            refs.add(n.getEvent());
          }
          answer(refs);
        }
        default -> timeline.add("other:" + message.getKindCase());
      }
    }

    private void answer(List<EventRef> refs) {
      if (!answerAcks) {
        return;
      }
      AckResults.Builder results = AckResults.newBuilder();
      refs.forEach(r -> results.addResults(AckResult.newBuilder().setEvent(r).setStatus(answer)));
      send(ManagerMessage.newBuilder().setAckResults(results).build());
    }

    @Override
    public void onError(Throwable t) {
      Status status = Status.fromThrowable(t);
      streamEnds.add(status);
      timeline.add("error:" + status.getCode());
      synchronized (this) {
        done = true;
      }
    }

    @Override
    public void onCompleted() {
      streamEnds.add(Status.OK);
      timeline.add("completed");
      synchronized (this) {
        if (!done) {
          done = true;
          out.onCompleted();
        }
      }
    }
  }
}
