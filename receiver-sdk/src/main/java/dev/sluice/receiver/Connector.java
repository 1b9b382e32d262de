package dev.sluice.receiver;

import dev.sluice.proto.v1.EventBatch;
import dev.sluice.proto.v1.ShardChange;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.proto.v1.Subscribe;
import dev.sluice.proto.v1.Subscribed;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one Subscribe stream open to one endpoint (manager): opens it on the shared connect thread,
 * and when it ends (error or completion by the manager) schedules a new one after this endpoint's
 * own backoff, whatever the other endpoints do. Knows the current stream, so the endpoint's sender
 * and {@code awaitSubscribed} can wait for a subscribed one.
 *
 * <p>Every kind of end (the manager unreachable, stopping, or answering NOT_FOUND or
 * FAILED_PRECONDITION because it leads no shard serving the queue yet) is retried after the same
 * exponential backoff, from the receiver's reconnect-min up to its reconnect-max, reset once a
 * stream is subscribed again. An outage is logged once: WARN at its first failure, DEBUG for each
 * later attempt, INFO when a stream is subscribed again.
 *
 * <p>Lock order: this connector's lock, then a session's monitor or the receiver's state lock (via
 * {@code closing}); {@code streamsChanged} is called holding none of them.
 */
final class Connector implements StreamSession.Listener {
  private static final Logger log = LoggerFactory.getLogger(Connector.class);

  private final ReceiverRuntime runtime;
  private final String endpoint;
  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final SluiceGrpc.SluiceStub stub;
  private final Subscribe subscribe;
  private final Backoff backoff;
  private final Outbox outbox;
  private final Consumer<EventBatch> events;

  private final Object lock = new Object();
  private StreamSession current; // guarded by lock; null between streams
  private long generation; // guarded by lock
  private boolean stopped; // guarded by lock
  private boolean down; // guarded by lock: an outage was logged and has not ended yet
  private Status.Code warned; // guarded by lock: the status code of the outage's last WARN
  private int failedAttempts; // guarded by lock: streams that ended since the last subscribed one

  /**
   * @param endpoint the target (or the caller's channel's authority), for logs
   * @param ownsChannel whether the receiver made the channel, so may reset its connection backoff
   * @param outbox where this endpoint's acks and nacks wait; while closing, a new stream is opened
   *     only if it still owes something
   * @param events takes each EventBatch of this endpoint's streams
   */
  Connector(
      ReceiverRuntime runtime,
      String endpoint,
      ManagedChannel channel,
      boolean ownsChannel,
      Subscribe subscribe,
      Backoff backoff,
      Outbox outbox,
      Consumer<EventBatch> events) {
    this.runtime = runtime;
    this.endpoint = endpoint;
    this.channel = channel;
    this.ownsChannel = ownsChannel;
    this.stub = SluiceGrpc.newStub(channel).withExecutor(runtime.callbackThread());
    this.subscribe = subscribe;
    this.backoff = backoff;
    this.outbox = outbox;
    this.events = events;
  }

  void start() {
    runtime.connectThread().execute(this::open);
  }

  private void open() {
    StreamSession session;
    synchronized (lock) {
      if (stopped || current != null) {
        return;
      }
      // While closing, a new stream is only worth it to deliver acks/nacks still owed.
      if (runtime.closing().getAsBoolean() && !outbox.owesWork()) {
        return;
      }
      generation++;
      session =
          new StreamSession(
              generation,
              this,
              outbox,
              runtime.stats(),
              runtime.silenced(),
              answer -> runtime.notices().answered(endpoint, answer));
      current = session;
      if (generation > 1) {
        runtime.stats().reconnects.incrementAndGet();
      }
    }
    if (ownsChannel && channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
      // Our backoff decides when to retry. Left alone, the channel would wait out its own
      // connection backoff (growing to two minutes) and fail every call fast meanwhile, so a
      // restarted manager would be found late.
      channel.resetConnectBackoff();
    }
    log.debug(
        "opening stream #{} to {} for queue {}",
        session.generation(),
        endpoint,
        subscribe.getQueue());
    try {
      stub.subscribe(session);
      session.sendSubscribe(subscribe);
    } catch (RuntimeException e) {
      // Treat a failure to even start the call like a broken stream, so the backoff loop goes on.
      session.onError(e);
    }
  }

  @Override
  public void subscribed(StreamSession session, Subscribed subscribed) {
    backoff.reset();
    boolean wasDown;
    int failed;
    synchronized (lock) {
      wasDown = down;
      failed = failedAttempts;
      down = false;
      warned = null;
      failedAttempts = 0;
      lock.notifyAll();
    }
    if (wasDown) {
      log.info(
          "receiver {} subscribed to queue {} at {} again after {} failed attempt(s) (shard {},"
              + " max_in_flight {})",
          subscribed.getReceiverId(),
          subscribed.getQueue(),
          endpoint,
          failed,
          subscribed.getShard(),
          subscribed.getMaxInFlight());
    } else {
      log.info(
          "receiver {} subscribed to queue {} at {} (shard {}, max_in_flight {})",
          subscribed.getReceiverId(),
          subscribed.getQueue(),
          endpoint,
          subscribed.getShard(),
          subscribed.getMaxInFlight());
    }
    runtime.streamsChanged().run();
  }

  @Override
  public void events(EventBatch batch) {
    events.accept(batch);
  }

  @Override
  public void shardChange(ShardChange change) {
    runtime.stats().shardChanges.incrementAndGet();
    log.info(
        "receiver {}: manager {} {} shard {} of queue {}",
        runtime.receiverId(),
        endpoint,
        change.getServing() ? "now serves" : "no longer serves",
        change.getShard(),
        change.getQueue());
  }

  @Override
  public void ended(StreamSession session, Status status) {
    runtime.extender().streamEnded(this);
    boolean stop;
    synchronized (lock) {
      if (current == session) {
        current = null;
      }
      lock.notifyAll();
      stop = stopped;
    }
    runtime.streamsChanged().run();
    if (!runtime.silenced().get()) {
      runtime.notices().streamEnded(endpoint, status);
    }
    if (stop) {
      return;
    }
    boolean closing = runtime.closing().getAsBoolean();
    if (closing) {
      log.info(
          "receiver {}: stream to manager {} ended while closing: {}",
          runtime.receiverId(),
          endpoint,
          describe(status));
      if (!outbox.owesWork()) {
        return;
      }
    }
    Duration delay = backoff.nextDelay();
    if (!closing) {
      logEnd(status, delay);
    }
    try {
      runtime.connectThread().schedule(this::open, delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The receiver shut down its threads meanwhile: nothing to reconnect for.
    }
  }

  /**
   * WARN for the first failure of an outage (and when a reachable manager's refusal changes, say
   * from NOT_FOUND to FAILED_PRECONDITION), DEBUG for the others until a stream is back.
   */
  private void logEnd(Status status, Duration delay) {
    String what = describe(status);
    Status.Code code = status.getCode();
    boolean refused = code == Status.Code.NOT_FOUND || code == Status.Code.FAILED_PRECONDITION;
    boolean first;
    int failed;
    synchronized (lock) {
      // A manager's answer that changes (NOT_FOUND, then FAILED_PRECONDITION) is news; a
      // transport that fails one way, then another (CANCELLED, then UNAVAILABLE) is the same
      // outage.
      first = !down || (refused && warned != code);
      down = true;
      warned = code;
      failed = ++failedAttempts;
    }
    if (!first) {
      log.debug(
          "receiver {}: stream to manager {} for queue {} ended again: {}; attempt {} failed,"
              + " next in {} ms",
          runtime.receiverId(),
          endpoint,
          subscribe.getQueue(),
          what,
          failed,
          delay.toMillis());
    } else if (refused) {
      log.warn(
          "receiver {}: manager {} does not serve queue {}: {}; it may lead no shard of it yet, so"
              + " retrying with backoff up to {} ms (next in {} ms; logged again when subscribed)",
          runtime.receiverId(),
          endpoint,
          subscribe.getQueue(),
          what,
          backoff.max().toMillis(),
          delay.toMillis());
    } else {
      log.warn(
          "receiver {}: stream to manager {} for queue {} ended: {}; reconnecting with backoff up"
              + " to {} ms (next in {} ms; logged again when subscribed)",
          runtime.receiverId(),
          endpoint,
          subscribe.getQueue(),
          what,
          backoff.max().toMillis(),
          delay.toMillis());
    }
  }

  /**
   * The current stream once the manager answered Subscribed on it; null if none within the timeout
   * or once stopped.
   */
  StreamSession awaitSubscribed(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (lock) {
      while (!stopped) {
        StreamSession s = current;
        if (s != null && s.isSubscribed() && !s.isEnded()) {
          return s;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return null;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return null;
    }
  }

  /** True while the current stream is subscribed and not ended. */
  /** Sends a deadline extension on the current stream; false when none is subscribed. */
  boolean sendExtend(dev.sluice.proto.v1.Extend x) {
    StreamSession s;
    synchronized (lock) {
      s = current;
    }
    return s != null && s.isSubscribed() && !s.isEnded() && s.sendExtend(x);
  }

  @Override
  public void extended(dev.sluice.proto.v1.ExtendResult result) {
    runtime.extender().answered(result);
  }

  boolean isConnected() {
    synchronized (lock) {
      return current != null && current.isSubscribed() && !current.isEnded();
    }
  }

  /** The current stream, subscribed or not; null between streams. */
  StreamSession current() {
    synchronized (lock) {
      return current;
    }
  }

  /** No more streams are opened; waiters are released. Returns the stream still open, if any. */
  StreamSession stop() {
    synchronized (lock) {
      stopped = true;
      lock.notifyAll();
      return current;
    }
  }

  /** Waits until the current stream (if any) has ended; false on timeout. */
  boolean awaitNoStream(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (lock) {
      while (current != null) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }

  /** "CODE (description)", without the cause's stack trace that Status.toString() carries. */
  static String describe(Status status) {
    return status.getDescription() == null
        ? status.getCode().toString()
        : status.getCode() + " (" + status.getDescription() + ")";
  }
}
