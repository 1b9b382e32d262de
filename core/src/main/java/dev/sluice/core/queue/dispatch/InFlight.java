package dev.sluice.core.queue.dispatch;

import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.core.window.OrderingKey;
import dev.sluice.db.store.EventRef;
import java.util.Map;

/**
 * A fired event an outlet holds, as the {@link InFlightTable} keeps it. Dispatcher thread only.
 *
 * @see Dispatcher
 */
final class InFlight {
  final CachedEvent event;

  /** The epoch the fire set: the one acks and nacks must carry. */
  final long epoch;

  final AttachedOutlet owner;

  /** When the fire was decided (database clock ns), for the dispatch-to-ack latency. */
  final long firedAtNs;

  /** When it times out; moved later by receivers' extensions ({@link InFlightTable#extend}). */
  long deadlineNs;

  /** An ack, nack, timeout or release is on its way to the database. */
  boolean settling;

  /** The outlet's credit (and the tenant's and class's counts) was given back. */
  boolean freed;

  InFlight(CachedEvent event, long epoch, AttachedOutlet owner, long firedAtNs, long deadlineNs) {
    this.event = event;
    this.epoch = epoch;
    this.owner = owner;
    this.firedAtNs = firedAtNs;
    this.deadlineNs = deadlineNs;
  }

  /** This attempt: the event's id at the epoch its fire set. */
  EventRef ref() {
    return new EventRef(event.id, epoch);
  }

  /**
   * What the owner is sent, with the row's {@code columns} as the fire read them.
   *
   * @param lastAttempt whether a failure of this attempt makes the event dead
   */
  Delivery delivery(String shard, String queue, Map<String, Object> columns, boolean lastAttempt) {
    CachedEvent e = event;
    return new Delivery(
        shard,
        queue,
        e.id,
        epoch,
        e.tenant,
        e.priority,
        e.dueNs,
        e.createdNs,
        firedAtNs,
        e.workClass,
        e.actorPath,
        columns,
        OrderingKey.text(e.orderingKey),
        e.group,
        lastAttempt,
        deadlineNs);
  }
}
