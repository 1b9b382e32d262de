package dev.sluice.receiver;

import dev.sluice.proto.v1.EventBatch;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.proto.v1.Subscribe;
import dev.sluice.proto.v1.Subscribed;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one Subscribe stream open: opens it on the connect thread, and when it ends (error or
 * completion by the manager) schedules a new one after a backoff. Knows the current stream, so the
 * sender and {@code awaitSubscribed} can wait for a subscribed one.
 */
final class Connector implements StreamSession.Listener {
  private static final Logger log = LoggerFactory.getLogger(Connector.class);

  private final SluiceGrpc.SluiceStub stub;
  private final Subscribe subscribe;
  private final ScheduledExecutorService connectThread;
  private final Backoff backoff;
  private final Outbox outbox;
  private final StatsCounters stats;
  private final AtomicBoolean silenced;
  private final Consumer<EventBatch> events;
  private final BooleanSupplier closing;
  private final BooleanSupplier workLeft;

  private final Object lock = new Object();
  private StreamSession current; // guarded by lock; null between streams
  private long generation; // guarded by lock
  private boolean stopped; // guarded by lock

  Connector(
      SluiceGrpc.SluiceStub stub,
      Subscribe subscribe,
      ScheduledExecutorService connectThread,
      Backoff backoff,
      Outbox outbox,
      StatsCounters stats,
      AtomicBoolean silenced,
      Consumer<EventBatch> events,
      BooleanSupplier closing,
      BooleanSupplier workLeft) {
    this.stub = stub;
    this.subscribe = subscribe;
    this.connectThread = connectThread;
    this.backoff = backoff;
    this.outbox = outbox;
    this.stats = stats;
    this.silenced = silenced;
    this.events = events;
    this.closing = closing;
    this.workLeft = workLeft;
  }

  void start() {
    connectThread.execute(this::open);
  }

  private void open() {
    StreamSession session;
    synchronized (lock) {
      if (stopped || current != null) {
        return;
      }
      // While closing, a new stream is only worth it to deliver acks/nacks still owed.
      if (closing.getAsBoolean() && !workLeft.getAsBoolean()) {
        return;
      }
      generation++;
      session = new StreamSession(generation, this, outbox, stats, silenced);
      current = session;
      if (generation > 1) {
        stats.reconnects.incrementAndGet();
      }
    }
    log.debug("opening stream #{} for queue {}", session.generation(), subscribe.getQueue());
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
        "receiver {} subscribed to queue {} (shard {}, max_in_flight {})",
        subscribed.getReceiverId(),
        subscribed.getQueue(),
        subscribed.getShard(),
        subscribed.getMaxInFlight());
    synchronized (lock) {
      lock.notifyAll();
    }
  }

  @Override
  public void events(EventBatch batch) {
    events.accept(batch);
  }

  @Override
  public void ended(StreamSession session, Status status) {
    synchronized (lock) {
      if (current == session) {
        current = null;
      }
      lock.notifyAll();
      if (stopped) {
        return;
      }
    }
    if (closing.getAsBoolean()) {
      log.info("stream to manager ended while closing: {}", describe(status));
      if (!workLeft.getAsBoolean()) {
        return;
      }
    }
    Duration delay = backoff.nextDelay();
    if (!closing.getAsBoolean()) {
      log.warn(
          "stream to manager ended: {}; reconnecting in {} ms", describe(status), delay.toMillis());
    }
    try {
      connectThread.schedule(this::open, delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The receiver shut down its threads meanwhile: nothing to reconnect for.
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

  private static String describe(Status status) {
    return status.getDescription() == null
        ? status.getCode().toString()
        : status.getCode() + " (" + status.getDescription() + ")";
  }
}
