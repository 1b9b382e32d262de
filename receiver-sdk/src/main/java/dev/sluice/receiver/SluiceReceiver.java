package dev.sluice.receiver;

import dev.sluice.proto.v1.NotifyShutdownRequest;
import dev.sluice.proto.v1.NotifyShutdownResponse;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.proto.v1.Subscribe;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receives events of one queue from one or more Sluice managers and hands them to an {@link
 * EventHandler}.
 *
 * <p>Each target (endpoint) is one manager process, which leads some of the deployment's shards.
 * The receiver keeps one Subscribe stream to every endpoint, each with its own reconnect backoff,
 * and all of them feed the same handler threads: the application sees one flow of events whatever
 * shard they come from. An event's ack or nack goes back to the endpoint that sent it; if that
 * endpoint stays unreachable for a second, through another connected endpoint instead (any manager
 * configured with the shard applies it through the same CAS). {@code maxInFlight} is granted per
 * stream.
 *
 * <p>Threads (all daemons, named {@code sluice-receiver-<receiverId>-<role>}):
 *
 * <ul>
 *   <li>{@code handler-N} ({@code concurrency} of them, shared by every endpoint): run the handler,
 *       one event each, and put the outcome in the outbox of the event's endpoint. Nothing else
 *       runs user code.
 *   <li>{@code sender} (one per endpoint; {@code sender-N} with several): the only thread that
 *       writes that endpoint's acks and nacks; drains its outbox into batched Acks/Nacks messages
 *       on the endpoint's current stream.
 *   <li>{@code connect} (one, shared): opens every endpoint's Subscribe stream and reopens it after
 *       that endpoint's backoff; opening never blocks.
 *   <li>{@code grpc} (one, shared): runs every stream's inbound callbacks (Subscribed, EventBatch,
 *       AckResults, ShardChange, stream end); it only queues work and updates counters, so it never
 *       blocks on a handler.
 *   <li>the caller's thread runs {@link #close()} (NotifyShutdown to every endpoint and the bounded
 *       waits) and {@link #abort()}.
 * </ul>
 *
 * <p>Every write on a stream (Subscribe, acks, half-close, cancel) is serialized by {@link
 * StreamSession}, since gRPC's request observer is not thread-safe. Network I/O itself runs on
 * gRPC's shared Netty threads.
 */
public final class SluiceReceiver implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SluiceReceiver.class);

  /** Bound of each wait in close() that the managers, not the handler, must end. */
  static final Duration PROTOCOL_TIMEOUT = Duration.ofSeconds(5);

  private enum State {
    NEW,
    RUNNING,
    CLOSING,
    CLOSED
  }

  /** One manager: its channel, the connector keeping its stream, its outbox and sender thread. */
  private record Endpoint(
      String name,
      ManagedChannel channel,
      boolean ownsChannel,
      Outbox outbox,
      Connector connector,
      Thread sender) {}

  private final ReceiverConfig config;
  private final StatsCounters stats = new StatsCounters();
  private final AtomicBoolean silenced = new AtomicBoolean(); // abort() was called
  private final AtomicBoolean stopped = new AtomicBoolean(); // close() reached its last step
  private final Dispatcher dispatcher;
  private final Extender extender;
  private final Object stateLock = new Object();
  private final Object closeLock = new Object();
  // Notified when a stream got subscribed or ended, and when the receiver stops. Taken before any
  // connector's lock, never while holding one.
  private final Object streamsChanged = new Object();
  private State state = State.NEW; // guarded by stateLock

  // Set by start(), under stateLock; endpoints is read without it (stats).
  private volatile List<Endpoint> endpoints = List.of();
  private ScheduledExecutorService connectThread;
  private ThreadPoolExecutor callbackThread;

  SluiceReceiver(ReceiverConfig config) {
    this.config = config;
    // Its one thread starts with the first extension or timer task (a pool starts threads lazily).
    this.extender =
        new Extender(
            Executors.newSingleThreadScheduledExecutor(
                new NamedThreadFactory(config.receiverId(), "extend", false)));
    this.extender.routes(
        () -> endpoints.stream().map(e -> new Extender.Route(e.outbox(), e.connector())).toList());
    this.dispatcher =
        new Dispatcher(
            config.receiverId(),
            config.concurrency(),
            config.handler(),
            stats,
            silenced,
            config.handlerThreads(),
            config.autoExtend() ? new AutoExtend(extender, config.autoExtendAt()) : null,
            extender);
  }

  public static SluiceReceiverBuilder builder() {
    return new SluiceReceiverBuilder();
  }

  public String receiverId() {
    return config.receiverId();
  }

  /**
   * Connects to every endpoint in the background and returns at once; each stream is retried until
   * close().
   */
  public SluiceReceiver start() {
    synchronized (stateLock) {
      if (state == State.RUNNING) {
        return this;
      }
      if (state != State.NEW) {
        throw new IllegalStateException("receiver " + receiverId() + " was already closed");
      }
      String id = receiverId();
      List<ManagedChannel> channels = openChannels();
      connectThread =
          Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory(id, "connect", false));
      // Discards callbacks that arrive after shutdown: by then nobody is listening.
      callbackThread =
          new ThreadPoolExecutor(
              1,
              1,
              0,
              TimeUnit.MILLISECONDS,
              new LinkedBlockingQueue<>(),
              new NamedThreadFactory(id, "grpc", false),
              new ThreadPoolExecutor.DiscardPolicy());
      ReceiverRuntime runtime =
          new ReceiverRuntime(
              id,
              connectThread,
              callbackThread,
              stats,
              silenced,
              this::isClosing,
              this::signalStreamsChanged,
              new ObserverNotices(config.observers()),
              extender);
      Subscribe subscribe =
          Subscribe.newBuilder()
              .setQueue(config.queue())
              .setReceiverId(id)
              .setMaxInFlight(config.maxInFlight())
              .setKeyRange(config.keyRange())
              .build();
      NamedThreadFactory senders = new NamedThreadFactory(id, "sender", channels.size() > 1);
      List<Endpoint> made = new ArrayList<>();
      for (int i = 0; i < channels.size(); i++) {
        ManagedChannel channel = channels.get(i);
        boolean owned = config.channel() == null;
        String name = owned ? config.targets().get(i) : channel.authority();
        made.add(endpoint(runtime, subscribe, senders, name, channel, owned));
      }
      endpoints = List.copyOf(made);
      state = State.RUNNING;
    }
    for (Endpoint e : endpoints) {
      e.connector().start();
      e.sender().start();
    }
    return this;
  }

  /** The caller's channel, or one owned channel per target (none left open if one fails). */
  private List<ManagedChannel> openChannels() {
    if (config.channel() != null) {
      return List.of(config.channel());
    }
    List<ManagedChannel> channels = new ArrayList<>();
    try {
      for (String target : config.targets()) {
        channels.add(config.security().open(target));
      }
    } catch (RuntimeException e) {
      channels.forEach(ManagedChannel::shutdownNow);
      throw e;
    }
    return channels;
  }

  private Endpoint endpoint(
      ReceiverRuntime runtime,
      Subscribe subscribe,
      NamedThreadFactory senders,
      String name,
      ManagedChannel channel,
      boolean owned) {
    Outbox outbox = new Outbox();
    Connector connector =
        new Connector(
            runtime,
            name,
            channel,
            owned,
            subscribe,
            new Backoff(config.reconnectMin(), config.reconnectMax()),
            outbox,
            batch -> dispatcher.dispatch(batch, outbox));
    Thread sender =
        senders.newThread(
            new AckSender(name, outbox, connector, silenced, stopped, this::connectedOtherThan));
    return new Endpoint(name, channel, owned, outbox, connector, sender);
  }

  /** Another endpoint's outbox whose stream is subscribed now, or null (see {@link AckSender}). */
  private Outbox connectedOtherThan(Outbox self) {
    for (Endpoint e : endpoints) {
      if (e.outbox() != self && e.connector().isConnected()) {
        return e.outbox();
      }
    }
    return null;
  }

  /**
   * True once a manager answered Subscribed on at least one endpoint's current stream (waits up to
   * timeout). With several targets, {@link ReceiverStats#streamsConnected()} tells how many are.
   */
  public boolean awaitSubscribed(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      synchronized (streamsChanged) {
        while (!isClosing()) {
          if (streamsConnected() > 0) {
            return true;
          }
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          TimeUnit.NANOSECONDS.timedWait(streamsChanged, left);
        }
        return false;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void signalStreamsChanged() {
    synchronized (streamsChanged) {
      streamsChanged.notifyAll();
    }
  }

  private int streamsConnected() {
    int n = 0;
    for (Endpoint e : endpoints) {
      if (e.connector().isConnected()) {
        n++;
      }
    }
    return n;
  }

  public ReceiverStats stats() {
    return stats.snapshot(dispatcher.inFlight(), streamsConnected());
  }

  /**
   * Graceful shutdown; idempotent, and concurrent callers wait for the first. Tells every manager
   * to send nothing new, lets in-flight handlings finish (interrupting them after shutdownTimeout),
   * delivers their acks and nacks to the managers that sent the events, then ends the streams and
   * releases the threads. Do not call it from a handler: it would wait for that very handling.
   */
  @Override
  public void close() {
    synchronized (closeLock) {
      synchronized (stateLock) {
        if (state == State.CLOSED || state == State.CLOSING) {
          return;
        }
        boolean started = state == State.RUNNING;
        state = started ? State.CLOSING : State.CLOSED;
        if (!started) {
          return;
        }
      }
      try {
        if (!silenced.get()) {
          drain();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        log.warn("receiver {}: close() interrupted; releasing without waiting", receiverId());
      } finally {
        release();
        synchronized (stateLock) {
          state = State.CLOSED;
        }
      }
    }
  }

  private void drain() throws InterruptedException {
    notifyShutdown();
    if (!dispatcher.awaitIdle(config.shutdownTimeout())) {
      log.warn(
          "receiver {}: {} events still queued or being handled after {}; interrupting handlers",
          receiverId(),
          dispatcher.inFlight(),
          config.shutdownTimeout());
      dispatcher.interruptAll();
      if (!dispatcher.awaitTermination(PROTOCOL_TIMEOUT)) {
        log.warn("receiver {}: handlers ignored the interrupt; leaving them", receiverId());
      }
    }
    // One bound for all endpoints: a manager that is down costs PROTOCOL_TIMEOUT once, not each.
    // Acks of a manager that is down move to another endpoint meanwhile, so sweep until every
    // outbox is answered at the same time, or the bound is reached.
    long deadline = System.nanoTime() + PROTOCOL_TIMEOUT.toNanos();
    boolean owed;
    do {
      for (Endpoint e : endpoints) {
        e.outbox().awaitAllAnswered(left(deadline));
      }
      owed = endpoints.stream().anyMatch(e -> e.outbox().unanswered() > 0);
    } while (owed && System.nanoTime() < deadline);
    for (Endpoint e : endpoints) {
      if (e.outbox().unanswered() > 0) {
        log.warn(
            "receiver {}: {} acks/nacks not answered by manager {} within {}",
            receiverId(),
            e.outbox().unanswered(),
            e.name(),
            PROTOCOL_TIMEOUT);
      }
    }
    stopped.set(true);
    List<StreamSession> open = new ArrayList<>();
    for (Endpoint e : endpoints) {
      StreamSession s = e.connector().stop();
      open.add(s);
      if (s != null) {
        s.halfClose();
      }
    }
    deadline = System.nanoTime() + PROTOCOL_TIMEOUT.toNanos();
    for (int i = 0; i < endpoints.size(); i++) {
      Endpoint e = endpoints.get(i);
      StreamSession s = open.get(i);
      if (s != null && !e.connector().awaitNoStream(left(deadline))) {
        log.warn(
            "receiver {}: manager {} did not end the stream within {}; cancelling it",
            receiverId(),
            e.name(),
            PROTOCOL_TIMEOUT);
        s.cancel("receiver closed");
      }
    }
  }

  private static Duration left(long deadlineNanos) {
    return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
  }

  /** Tells every endpoint at once, then waits for all answers within one bound. */
  private void notifyShutdown() throws InterruptedException {
    NotifyShutdownRequest request =
        NotifyShutdownRequest.newBuilder().setReceiverId(receiverId()).build();
    List<CompletableFuture<NotifyShutdownResponse>> calls = new ArrayList<>();
    for (Endpoint e : endpoints) {
      CompletableFuture<NotifyShutdownResponse> call = new CompletableFuture<>();
      // The response's counters are informational; depending on none keeps this SDK loosely
      // coupled to the manager's version.
      SluiceGrpc.newStub(e.channel())
          .withDeadlineAfter(PROTOCOL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
          .notifyShutdown(request, completing(call));
      calls.add(call);
    }
    for (int i = 0; i < calls.size(); i++) {
      String name = endpoints.get(i).name();
      try {
        // The call's deadline bounds this wait.
        calls.get(i).get();
        log.info("receiver {}: manager {} notified of shutdown", receiverId(), name);
      } catch (ExecutionException e) {
        log.warn(
            "receiver {}: NotifyShutdown to {} failed: {}; closing anyway",
            receiverId(),
            name,
            Connector.describe(Status.fromThrowable(e.getCause())));
      }
    }
  }

  private static <T> StreamObserver<T> completing(CompletableFuture<T> future) {
    return new StreamObserver<>() {
      @Override
      public void onNext(T value) {
        future.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        future.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        future.complete(null);
      }
    };
  }

  /**
   * Simulates a crash: cancels the stream, interrupts the handlers and stops every thread. No ack
   * or nack is sent once this is called; the manager redelivers what this receiver held.
   */
  public void abort() {
    silenced.set(true);
    synchronized (stateLock) {
      if (state == State.NEW) {
        state = State.CLOSED;
        return;
      }
      state = State.CLOSED;
    }
    stopped.set(true);
    for (Endpoint e : endpoints) {
      StreamSession open = e.connector().stop();
      if (open != null) {
        open.cancel("receiver aborted");
      }
      if (e.ownsChannel()) {
        e.channel()
            .shutdownNow(); // before release(), which would otherwise wait for a graceful end
      }
    }
    release();
  }

  private boolean isClosing() {
    synchronized (stateLock) {
      return state != State.RUNNING;
    }
  }

  /** Stops every thread; shuts the owned channels down with one bounded wait for all. */
  private void release() {
    for (Endpoint e : endpoints) {
      e.connector().stop();
    }
    signalStreamsChanged();
    dispatcher.interruptAll();
    for (Endpoint e : endpoints) {
      e.sender().interrupt();
    }
    connectThread.shutdownNow();
    extender.timer().shutdownNow();
    callbackThread.shutdown();
    List<Endpoint> owned = new ArrayList<>();
    for (Endpoint e : endpoints) {
      if (e.ownsChannel() && !e.channel().isShutdown()) {
        e.channel().shutdown();
        owned.add(e);
      }
    }
    long deadline = System.nanoTime() + PROTOCOL_TIMEOUT.toNanos();
    try {
      for (Endpoint e : owned) {
        if (!e.channel().awaitTermination(left(deadline).toNanos(), TimeUnit.NANOSECONDS)) {
          log.warn(
              "receiver {}: channel to {} did not terminate within {}",
              receiverId(),
              e.name(),
              PROTOCOL_TIMEOUT);
          e.channel().shutdownNow();
        }
      }
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      owned.forEach(e -> e.channel().shutdownNow());
    }
  }
}
