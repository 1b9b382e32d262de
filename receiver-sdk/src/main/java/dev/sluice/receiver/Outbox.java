package dev.sluice.receiver;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;

/**
 * One endpoint's completed handlings waiting to be sent, plus the count of those its manager has
 * not answered yet and of its events still being handled. Acks and nacks go back to the manager
 * that sent the event (or, while it is unreachable, through another: see {@link AckSender}), so
 * each endpoint has its own outbox and sender thread.
 *
 * <p>Handler threads {@link #add} and the single sender thread {@link #takeBatch}es. Batching comes
 * for free: the sender blocks until one completion is there (no added delay when idle) and then
 * drains everything that piled up while it was busy sending, so under load many acks share one
 * message.
 */
final class Outbox {
  private final LinkedBlockingDeque<Completion> queue = new LinkedBlockingDeque<>();
  private final Object lock = new Object();
  private long unanswered; // guarded by lock: added and not yet answered by an AckResult
  private long handling; // guarded by lock: events from this endpoint not completed yet

  /** An event from this endpoint went to the handlers; its completion will be added here. */
  void handlingStarted() {
    synchronized (lock) {
      handling++;
    }
  }

  /** The handling of one of this endpoint's events ended (its completion, if any, is added). */
  void handlingEnded() {
    synchronized (lock) {
      handling--;
    }
  }

  /** True while this endpoint is owed something: an event being handled or an unanswered ack. */
  boolean owesWork() {
    synchronized (lock) {
      return handling > 0 || unanswered > 0;
    }
  }

  void add(Completion completion) {
    synchronized (lock) {
      unanswered++;
    }
    queue.addLast(completion);
  }

  /**
   * Puts back completions that were sent on a stream that ended before they were answered, ahead of
   * newer ones, so that the next stream sends them again.
   */
  void requeue(List<Completion> completions) {
    for (int i = completions.size() - 1; i >= 0; i--) {
      queue.addFirst(completions.get(i));
    }
  }

  /** Blocks until at least one completion is queued, then takes up to {@code max} of them. */
  List<Completion> takeBatch(int max) throws InterruptedException {
    List<Completion> batch = new ArrayList<>();
    batch.add(queue.takeFirst());
    queue.drainTo(batch, max - 1);
    return batch;
  }

  /** Tops {@code batch} up to {@code max} with completions queued meanwhile, without blocking. */
  void drainInto(List<Completion> batch, int max) {
    if (batch.size() < max) {
      queue.drainTo(batch, max - batch.size());
    }
  }

  /** Records that the manager answered {@code count} completions. */
  void answered(int count) {
    synchronized (lock) {
      unanswered -= count;
      lock.notifyAll();
    }
  }

  long unanswered() {
    synchronized (lock) {
      return unanswered;
    }
  }

  /** Waits until every added completion was answered; false on timeout. */
  boolean awaitAllAnswered(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (lock) {
      while (unanswered > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }
}
