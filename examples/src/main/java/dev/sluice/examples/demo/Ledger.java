package dev.sluice.examples.demo;

import dev.sluice.proto.v1.CancelStatus;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the producer knows it did: which transactions committed (event → order id), which it rolled
 * back on purpose (by order id, since their event ids never become visible), and which events the
 * manager confirmed cancelled. Receivers' sightings are judged against this.
 *
 * <p>A transaction that failed unexpectedly (the database went away mid-commit, say) is in doubt:
 * it may or may not have committed. {@link #resolveInDoubt} settles each one at the end by reading
 * its order back from its shard, as an application would after an ambiguous commit: the order and
 * its event commit together, so the event exists if and only if the order does.
 *
 * <p>Thread-safe: the producer writes, the progress printer and the report read.
 */
final class Ledger {
  /** A transaction whose outcome is unknown, with the shard it went to. */
  record InDoubt(String shard, long orderId) {}

  /** How an in-doubt transaction turned out. */
  interface Resolver {
    OptionalLong eventOfOrder(String shard, long orderId) throws SQLException;
  }

  private final Map<EventKey, Long> committed = new ConcurrentHashMap<>();
  private final Set<Long> rolledBackOrders = ConcurrentHashMap.newKeySet();
  private final Set<Long> notCommittedOrders = ConcurrentHashMap.newKeySet();
  private final Set<EventKey> cancelled = ConcurrentHashMap.newKeySet();
  private final Set<EventKey> cancelTried = ConcurrentHashMap.newKeySet();
  private final ConcurrentLinkedQueue<InDoubt> inDoubt = new ConcurrentLinkedQueue<>();
  private final AtomicLong attempted = new AtomicLong();
  private final AtomicLong scheduled = new AtomicLong();
  private final AtomicLong cancelRefused = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong resolvedCommitted = new AtomicLong();

  void committed(EventKey event, long orderId, boolean inFuture) {
    committed.put(event, orderId);
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
   * committed) until {@link #resolveInDoubt}.
   */
  void failed(String shard, long orderId) {
    failed.incrementAndGet();
    inDoubt.add(new InDoubt(shard, orderId));
    attempted.incrementAndGet();
  }

  /**
   * Settles every in-doubt transaction: committed ones join the committed events (so they must be
   * delivered), the others can never fire. Call once the database is stable again.
   */
  void resolveInDoubt(Resolver resolver) throws SQLException {
    for (InDoubt d : List.copyOf(inDoubt)) {
      OptionalLong event = resolver.eventOfOrder(d.shard(), d.orderId());
      if (event.isPresent()) {
        committed.put(new EventKey(d.shard(), event.getAsLong()), d.orderId());
        resolvedCommitted.incrementAndGet();
      } else {
        notCommittedOrders.add(d.orderId());
      }
      inDoubt.remove(d);
    }
  }

  /**
   * Only a CANCELLED answer makes a promise ("never fires"); anything else must still deliver —
   * unless the table shows the cancel applied after all (a manager killed between applying it and
   * answering), see {@link #cancelTried}.
   */
  void cancelAnswered(EventKey event, CancelStatus status) {
    cancelTried.add(event);
    if (status == CancelStatus.CANCEL_STATUS_CANCELLED) {
      cancelled.add(event);
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

  /** Transactions that failed unexpectedly (each was then resolved by reading it back). */
  long failedCount() {
    return failed.get();
  }

  /** Of the failed transactions, those that had committed after all. */
  long resolvedCommittedCount() {
    return resolvedCommitted.get();
  }

  /** Committed events with their order ids (a live view). */
  Map<EventKey, Long> committedEvents() {
    return committed;
  }

  /** Whether the order's transaction did not commit: rolled back on purpose, or failed. */
  boolean isRolledBackOrder(long orderId) {
    return rolledBackOrders.contains(orderId) || notCommittedOrders.contains(orderId);
  }

  /** Whether a cancel was sent for the event, whatever the answer (or its absence). */
  boolean cancelTried(EventKey event) {
    return cancelTried.contains(event);
  }

  boolean isCancelled(EventKey event) {
    return cancelled.contains(event);
  }
}
