package dev.sluice.receiver;

import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.EventBatch;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the user's handler on a fixed pool of {@code concurrency} threads and turns each outcome
 * into a {@link Completion} for the outbox of the endpoint the event came from. Every endpoint's
 * stream feeds this one pool, so the application sees one flow of events whatever shard or manager
 * they come from. The pool's queue is unbounded on purpose: each manager already bounds what it
 * pushes on a stream by max_in_flight, and the handler threads bound what runs at once.
 */
final class Dispatcher {
  private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);
  static final String REFUSED = "receiver is shutting down; event was not handled";

  private final EventHandler handler;
  private final StatsCounters stats;
  private final AtomicBoolean silenced;
  private final ThreadPoolExecutor pool;
  private final AutoExtend autoExtend; // null: off
  private final Extender extender;
  private int inFlight; // guarded by this

  Dispatcher(
      String receiverId,
      int concurrency,
      EventHandler handler,
      StatsCounters stats,
      AtomicBoolean silenced,
      java.util.concurrent.ThreadFactory threads,
      AutoExtend autoExtend,
      Extender extender) {
    this.autoExtend = autoExtend;
    this.extender = extender;
    this.handler = handler;
    this.stats = stats;
    this.silenced = silenced;
    this.pool =
        new ThreadPoolExecutor(
            concurrency,
            concurrency,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            threads != null ? threads : new NamedThreadFactory(receiverId, "handler", true));
  }

  /**
   * Called on the gRPC callback thread for every EventBatch; {@code outbox} is that of the endpoint
   * whose stream delivered it, where the acks and nacks go.
   */
  void dispatch(EventBatch batch, Outbox outbox) {
    for (Event event : batch.getEventsList()) {
      stats.received.incrementAndGet();
      synchronized (this) {
        inFlight++;
      }
      outbox.handlingStarted();
      HandleTask task = task(event, outbox);
      try {
        pool.execute(task);
      } catch (RejectedExecutionException e) {
        task.stopExtending();
        // Arrived after the handler threads were shut down (end of close()): let the manager
        // redeliver it elsewhere instead of leaving it to time out.
        finish(
            Completion.nack(event.getId(), event.getEpoch(), event.getShard(), 0, REFUSED)
                .withToken(event.getDeliveryToken()),
            outbox);
      }
    }
  }

  /**
   * The handling of {@code event}; its automatic extension starts now, at its arrival, so that an
   * event waiting for a free handler thread (a receiver may hold more than its threads: each
   * manager's stream has its own credits, and a broken stream's events go on running) is not taken
   * back and delivered again meanwhile.
   */
  private HandleTask task(Event event, Outbox outbox) {
    ReceivedEvent received = new ReceivedEvent(event);
    received.extensions(extender, outbox);
    AutoExtend.Running extending =
        autoExtend == null ? null : autoExtend.start(received, System.nanoTime());
    return new HandleTask(event, outbox, received, extending);
  }

  synchronized int inFlight() {
    return inFlight;
  }

  /** Waits until no handling is queued or running; false on timeout. */
  synchronized boolean awaitIdle(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (inFlight > 0) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /**
   * Interrupts running handlers and refuses everything not started yet (nacked, so the manager can
   * redeliver it). New events are refused from now on.
   */
  void interruptAll() {
    List<Runnable> notStarted = pool.shutdownNow();
    for (Runnable r : notStarted) {
      HandleTask task = (HandleTask) r;
      task.stopExtending();
      Event e = task.event;
      finish(
          Completion.nack(e.getId(), e.getEpoch(), e.getShard(), 0, REFUSED)
              .withToken(e.getDeliveryToken()),
          task.outbox);
    }
  }

  boolean awaitTermination(Duration timeout) throws InterruptedException {
    return pool.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  private void finish(Completion completion, Outbox outbox) {
    stats.completed(completion);
    // Into the outbox before in-flight drops, so close() never sees "idle" with an ack not queued.
    if (!silenced.get()) {
      outbox.add(completion);
    }
    outbox.handlingEnded();
    synchronized (this) {
      inFlight--;
      notifyAll();
    }
  }

  /** Rounds a sub-millisecond delay up, since 0 on the wire means "the queue's backoff". */
  static long retryAfterMs(Duration delay) {
    long ms = delay.toMillis();
    return ms == 0 && !delay.isZero() ? 1 : ms;
  }

  private final class HandleTask implements Runnable {
    final Event event;
    final Outbox outbox;
    final ReceivedEvent received;
    final AutoExtend.Running extending; // null: not extended

    HandleTask(Event event, Outbox outbox, ReceivedEvent received, AutoExtend.Running extending) {
      this.event = event;
      this.outbox = outbox;
      this.received = received;
      this.extending = extending;
    }

    void stopExtending() {
      if (extending != null) {
        extending.stop();
      }
    }

    @Override
    public void run() {
      long id = event.getId();
      long epoch = event.getEpoch();
      Completion completion;
      try {
        handler.handle(received);
        completion =
            received.ackedInTransaction()
                ? Completion.committed(id, epoch, event.getShard())
                : Completion.ack(id, epoch, event.getShard());
      } catch (Snooze z) {
        completion =
            Completion.snooze(id, epoch, event.getShard(), retryAfterMs(z.delay()), z.reason());
      } catch (RetryLater r) {
        completion =
            Completion.nack(id, epoch, event.getShard(), retryAfterMs(r.delay()), r.reason());
      } catch (Throwable t) {
        String reason =
            t.getMessage() == null
                ? t.getClass().getName()
                : t.getClass().getName() + ": " + t.getMessage();
        log.warn("handler failed for event {} (attempt {}): {}", id, epoch, reason, t);
        completion = Completion.nack(id, epoch, event.getShard(), 0, reason);
      } finally {
        stopExtending();
      }
      finish(completion.withToken(event.getDeliveryToken()), outbox);
    }
  }
}
