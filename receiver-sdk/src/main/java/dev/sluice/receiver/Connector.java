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
import java.util.HashSet;
import java.util.Set;
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
 * <p>A manager that cannot be reached (UNAVAILABLE) is probed every {@link #UNREACHABLE_PROBE} at
 * most, so a manager whose port opens is found at once. A manager that answers NOT_FOUND or
 * FAILED_PRECONDITION for the queue may simply lead no shard serving it yet (leadership moves
 * between managers), so that is retried like any broken stream; only its log is quieter: WARN once
 * per distinct answer, then DEBUG, until a stream is subscribed.
 *
 * <p>Lock order: this connector's lock, then a session's monitor or the receiver's state lock (via
 * {@code closing}); {@code streamsChanged} is called holding none of them.
 */
final class Connector implements StreamSession.Listener {
  private static final Logger log = LoggerFactory.getLogger(Connector.class);

  /** Bounds the memory of refusals already logged at WARN. */
  private static final int MAX_LOGGED_REFUSALS = 32;

  /**
   * The longest wait between two attempts while the manager cannot be reached (UNAVAILABLE: port
   * closed, manager stopping): a refused connection costs next to nothing, and a manager that
   * (re)starts and takes shards over must get its receivers within a fraction of a lease renewal,
   * not after a backoff grown to seconds.
   */
  static final Duration UNREACHABLE_PROBE = Duration.ofMillis(250);

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
  private final Set<String> loggedRefusals = new HashSet<>(); // guarded by lock

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
      session = new StreamSession(generation, this, outbox, runtime.stats(), runtime.silenced());
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
    log.info(
        "receiver {} subscribed to queue {} at {} (shard {}, max_in_flight {})",
        subscribed.getReceiverId(),
        subscribed.getQueue(),
        endpoint,
        subscribed.getShard(),
        subscribed.getMaxInFlight());
    synchronized (lock) {
      loggedRefusals.clear();
      lock.notifyAll();
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
    boolean stop;
    synchronized (lock) {
      if (current == session) {
        current = null;
      }
      lock.notifyAll();
      stop = stopped;
    }
    runtime.streamsChanged().run();
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
    if (status.getCode() == Status.Code.UNAVAILABLE && delay.compareTo(UNREACHABLE_PROBE) > 0) {
      delay = UNREACHABLE_PROBE;
    }
    if (!closing) {
      logEnd(status, delay);
    }
    try {
      runtime.connectThread().schedule(this::open, delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The receiver shut down its threads meanwhile: nothing to reconnect for.
    }
  }

  private void logEnd(Status status, Duration delay) {
    String what = describe(status);
    Status.Code code = status.getCode();
    if (code != Status.Code.NOT_FOUND && code != Status.Code.FAILED_PRECONDITION) {
      log.warn(
          "receiver {}: stream to manager {} ended: {}; reconnecting in {} ms",
          runtime.receiverId(),
          endpoint,
          what,
          delay.toMillis());
      return;
    }
    boolean first;
    synchronized (lock) {
      if (loggedRefusals.size() >= MAX_LOGGED_REFUSALS) {
        loggedRefusals.clear();
      }
      first = loggedRefusals.add(what);
    }
    if (first) {
      log.warn(
          "receiver {}: manager {} does not serve queue {}: {}; it may lead no shard of it yet,"
              + " so retrying with backoff (next in {} ms; this answer is logged at DEBUG from now"
              + " on)",
          runtime.receiverId(),
          endpoint,
          subscribe.getQueue(),
          what,
          delay.toMillis());
    } else {
      log.debug(
          "receiver {}: manager {} still does not serve queue {}: {}; retrying in {} ms",
          runtime.receiverId(),
          endpoint,
          subscribe.getQueue(),
          what,
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
