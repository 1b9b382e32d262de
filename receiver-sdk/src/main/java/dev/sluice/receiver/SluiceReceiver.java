package dev.sluice.receiver;

import dev.sluice.proto.v1.NotifyShutdownRequest;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.proto.v1.Subscribe;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receives events of one queue from a Sluice manager and hands them to an {@link EventHandler}.
 *
 * <p>Threads (all daemons, named {@code sluice-receiver-<receiverId>-<role>}):
 *
 * <ul>
 *   <li>{@code handler-N} ({@code concurrency} of them): run the handler, one event each, and put
 *       the outcome in the outbox. Nothing else runs user code.
 *   <li>{@code sender}: the only thread that writes acks and nacks; drains the outbox into batched
 *       Acks/Nacks messages on the current stream.
 *   <li>{@code connect}: opens the Subscribe stream and reopens it after the backoff.
 *   <li>{@code grpc}: runs the stream's inbound callbacks (Subscribed, EventBatch, AckResults,
 *       stream end); it only queues work and updates counters, so it never blocks on a handler.
 *   <li>the caller's thread runs {@link #close()} (NotifyShutdown and the bounded waits) and {@link
 *       #abort()}.
 * </ul>
 *
 * <p>Every write on the stream (Subscribe, acks, half-close, cancel) is serialized by {@link
 * StreamSession}, since gRPC's request observer is not thread-safe. Network I/O itself runs on
 * gRPC's shared Netty threads.
 */
public final class SluiceReceiver implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SluiceReceiver.class);

  /** Bound of each wait in close() that the manager, not the handler, must end. */
  static final Duration PROTOCOL_TIMEOUT = Duration.ofSeconds(5);

  private enum State {
    NEW,
    RUNNING,
    CLOSING,
    CLOSED
  }

  private final ReceiverConfig config;
  private final StatsCounters stats = new StatsCounters();
  private final Outbox outbox = new Outbox();
  private final AtomicBoolean silenced = new AtomicBoolean(); // abort() was called
  private final AtomicBoolean stopped = new AtomicBoolean(); // close() reached its last step
  private final Dispatcher dispatcher;
  private final Object stateLock = new Object();
  private final Object closeLock = new Object();
  private State state = State.NEW; // guarded by stateLock

  // Set by start(), under stateLock.
  private ManagedChannel channel;
  private ScheduledExecutorService connectThread;
  private ThreadPoolExecutor callbackThread;
  private Connector connector;
  private Thread sender;

  SluiceReceiver(ReceiverConfig config) {
    this.config = config;
    this.dispatcher =
        new Dispatcher(
            config.receiverId(), config.concurrency(), config.handler(), outbox, stats, silenced);
  }

  public static SluiceReceiverBuilder builder() {
    return new SluiceReceiverBuilder();
  }

  public String receiverId() {
    return config.receiverId();
  }

  /** Connects in the background and returns at once; the stream is retried until close(). */
  public SluiceReceiver start() {
    synchronized (stateLock) {
      if (state == State.RUNNING) {
        return this;
      }
      if (state != State.NEW) {
        throw new IllegalStateException("receiver " + receiverId() + " was already closed");
      }
      String id = receiverId();
      channel =
          config.channel() != null
              ? config.channel()
              : ManagedChannelBuilder.forTarget(config.target()).usePlaintext().build();
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
      Subscribe subscribe =
          Subscribe.newBuilder()
              .setQueue(config.queue())
              .setReceiverId(id)
              .setMaxInFlight(config.maxInFlight())
              .build();
      connector =
          new Connector(
              SluiceGrpc.newStub(channel).withExecutor(callbackThread),
              subscribe,
              connectThread,
              new Backoff(config.reconnectMin(), config.reconnectMax()),
              outbox,
              stats,
              silenced,
              dispatcher::dispatch,
              this::isClosing,
              () -> outbox.unanswered() > 0 || dispatcher.inFlight() > 0);
      sender =
          new NamedThreadFactory(id, "sender", false)
              .newThread(new AckSender(outbox, connector, silenced, stopped));
      state = State.RUNNING;
    }
    connector.start();
    sender.start();
    return this;
  }

  /** True once the manager answered Subscribed on the current stream (waits up to timeout). */
  public boolean awaitSubscribed(Duration timeout) {
    Connector c;
    synchronized (stateLock) {
      c = connector;
    }
    if (c == null) {
      return false;
    }
    try {
      return c.awaitSubscribed(timeout) != null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  public ReceiverStats stats() {
    return stats.snapshot(dispatcher.inFlight());
  }

  /**
   * Graceful shutdown; idempotent, and concurrent callers wait for the first. Tells the manager to
   * send nothing new, lets in-flight handlings finish (interrupting them after shutdownTimeout),
   * delivers their acks and nacks, then ends the stream and releases the threads. Do not call it
   * from a handler: it would wait for that very handling.
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
    if (!outbox.awaitAllAnswered(PROTOCOL_TIMEOUT)) {
      log.warn(
          "receiver {}: {} acks/nacks not answered by the manager within {}",
          receiverId(),
          outbox.unanswered(),
          PROTOCOL_TIMEOUT);
    }
    stopped.set(true);
    StreamSession open = connector.stop();
    if (open != null) {
      open.halfClose();
      if (!connector.awaitNoStream(PROTOCOL_TIMEOUT)) {
        log.warn(
            "receiver {}: manager did not end the stream within {}; cancelling it",
            receiverId(),
            PROTOCOL_TIMEOUT);
        open.cancel("receiver closed");
      }
    }
  }

  private void notifyShutdown() {
    try {
      // The response's counters are informational; depending on none keeps this SDK loosely
      // coupled to the manager's version.
      SluiceGrpc.newBlockingStub(channel)
          .withDeadlineAfter(PROTOCOL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
          .notifyShutdown(NotifyShutdownRequest.newBuilder().setReceiverId(receiverId()).build());
      log.info("receiver {}: manager notified of shutdown", receiverId());
    } catch (StatusRuntimeException e) {
      log.warn(
          "receiver {}: NotifyShutdown failed: {}; closing anyway", receiverId(), e.getStatus());
    }
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
    StreamSession open = connector.stop();
    if (open != null) {
      open.cancel("receiver aborted");
    }
    if (config.channel() == null) {
      channel.shutdownNow(); // before release(), which would otherwise wait for a graceful end
    }
    release();
  }

  private boolean isClosing() {
    synchronized (stateLock) {
      return state != State.RUNNING;
    }
  }

  /** Stops every thread; for an owned channel, shuts it down with a bounded wait. */
  private void release() {
    connector.stop();
    dispatcher.interruptAll();
    sender.interrupt();
    connectThread.shutdownNow();
    callbackThread.shutdown();
    if (config.channel() == null && !channel.isShutdown()) {
      channel.shutdown();
      try {
        if (!channel.awaitTermination(PROTOCOL_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)) {
          log.warn(
              "receiver {}: channel did not terminate within {}", receiverId(), PROTOCOL_TIMEOUT);
          channel.shutdownNow();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        channel.shutdownNow();
      }
    }
  }
}
