package dev.sluice.receiver;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Extends the deadline of events whose handler runs long, while it runs (on by default, {@link
 * SluiceReceiverBuilder#autoExtend}). Once {@code share} of the attempt's hold (its deadline minus
 * its fire: the queue's ack_wait) has passed since the event arrived, it asks for one more hold
 * from now, and again each time that share of the new hold has passed, until the handler ends or
 * the manager refuses (the attempt is stale, or at the queue's max_hold). A failure to reach a
 * manager is logged and tried again sooner; the handler is never interrupted: if its deadline
 * passes, the event is delivered again and this handler's ack is answered STALE, as without
 * extension.
 *
 * <p>The extender's timer thread runs the checks; a handler thread starts and stops its {@link
 * Running}.
 */
final class AutoExtend {
  private static final Logger log = LoggerFactory.getLogger(AutoExtend.class);

  private final Extender extender;
  private final double share;

  AutoExtend(Extender extender, double share) {
    this.extender = extender;
    this.share = share;
  }

  /**
   * Starts watching {@code event}, which arrived at {@code receivedNanos} (System.nanoTime); null
   * when its deadline is unknown (a manager older than extensions).
   */
  Running start(ReceivedEvent event, long receivedNanos) {
    long holdNs = event.holdNanos();
    if (holdNs <= 0) {
      return null;
    }
    Running r = new Running(event, holdNs);
    long first = receivedNanos + (long) (share * holdNs) - System.nanoTime();
    r.schedule(Math.max(0, first));
    return r;
  }

  /** One handling being watched. */
  final class Running {
    private final ReceivedEvent event;
    private final long holdNs;
    private boolean stopped; // guarded by this
    private ScheduledFuture<?> next; // guarded by this

    Running(ReceivedEvent event, long holdNs) {
      this.event = event;
      this.holdNs = holdNs;
    }

    private synchronized void schedule(long delayNs) {
      if (stopped) {
        return;
      }
      ScheduledExecutorService timer = extender.timer();
      try {
        next = timer.schedule(this::extendNow, delayNs, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        stopped = true; // the receiver is stopping
      }
    }

    private void extendNow() {
      synchronized (this) {
        if (stopped) {
          return;
        }
      }
      // An answer slower than the share of the hold is not waited for: the next try supersedes it.
      long patienceNs = Math.max(TimeUnit.MILLISECONDS.toNanos(200), (long) (share * holdNs));
      event
          .extend(Duration.ofNanos(holdNs))
          .orTimeout(patienceNs, TimeUnit.NANOSECONDS)
          .whenComplete(
              (deadline, error) -> {
                if (error == null) {
                  schedule((long) (share * holdNs));
                  return;
                }
                Throwable cause = error.getCause() != null ? error.getCause() : error;
                if (cause instanceof ExtensionRefused refused) {
                  log.warn(
                      "event {} (attempt {}, queue {}, shard {}): automatic extension stopped: {}",
                      event.id(),
                      event.attempt(),
                      event.queue(),
                      event.shard(),
                      refused.getMessage());
                  stop();
                } else {
                  // A slow answer is routine under load (the next try supersedes it): DEBUG; a
                  // failure to reach any manager is worth a WARN.
                  boolean slow = cause instanceof java.util.concurrent.TimeoutException;
                  (slow ? log.atDebug() : log.atWarn())
                      .log(
                          "event {} (attempt {}, queue {}, shard {}): extension failed, trying again: {}",
                          event.id(),
                          event.attempt(),
                          event.queue(),
                          event.shard(),
                          cause.toString());
                  schedule(Math.min(TimeUnit.SECONDS.toNanos(1), (long) (share * holdNs / 2)));
                }
              });
    }

    /** The handler ended: no more extensions. */
    synchronized void stop() {
      stopped = true;
      if (next != null) {
        next.cancel(false);
      }
    }
  }
}
