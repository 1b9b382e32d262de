package dev.sluice.examples.demo;

import dev.sluice.proto.v1.CancelStatus;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the producer knows it did: which transactions committed (event id → order id), which it
 * rolled back on purpose (by order id, since their event ids never become visible), and which
 * events the manager confirmed cancelled. Receivers' sightings are judged against this.
 *
 * <p>Thread-safe: the producer writes, the progress printer and the report read.
 */
final class Ledger {
  private final Map<Long, Long> committed = new ConcurrentHashMap<>();
  private final Set<Long> rolledBackOrders = ConcurrentHashMap.newKeySet();
  private final Set<Long> cancelled = ConcurrentHashMap.newKeySet();
  private final AtomicLong attempted = new AtomicLong();
  private final AtomicLong scheduled = new AtomicLong();
  private final AtomicLong cancelRefused = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();

  void committed(long eventId, long orderId, boolean inFuture) {
    committed.put(eventId, orderId);
    if (inFuture) {
      scheduled.incrementAndGet();
    }
    attempted.incrementAndGet();
  }

  void rolledBack(long orderId) {
    rolledBackOrders.add(orderId);
    attempted.incrementAndGet();
  }

  /**
   * A transaction that failed unexpectedly. Its outcome is unknown (a failed commit may still have
   * committed), so it is counted neither as committed nor as rolled back.
   */
  void failed() {
    failed.incrementAndGet();
    attempted.incrementAndGet();
  }

  /** Only a CANCELLED answer makes a promise ("never fires"); anything else must still deliver. */
  void cancelAnswered(long eventId, CancelStatus status) {
    if (status == CancelStatus.CANCEL_STATUS_CANCELLED) {
      cancelled.add(eventId);
    } else {
      cancelRefused.incrementAndGet();
    }
  }

  long attempted() {
    return attempted.get();
  }

  long committedCount() {
    return committed.size();
  }

  long rolledBackCount() {
    return rolledBackOrders.size();
  }

  long cancelledCount() {
    return cancelled.size();
  }

  long scheduledCount() {
    return scheduled.get();
  }

  long cancelRefusedCount() {
    return cancelRefused.get();
  }

  long failedCount() {
    return failed.get();
  }

  /** Committed events by event id, with their order ids (a live view). */
  Map<Long, Long> committedEvents() {
    return committed;
  }

  boolean isRolledBackOrder(long orderId) {
    return rolledBackOrders.contains(orderId);
  }

  boolean isCancelled(long eventId) {
    return cancelled.contains(eventId);
  }
}
