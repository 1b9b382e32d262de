package dev.sluice.core.queue;

/**
 * A fired event a receiver holds. Dispatcher thread only.
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

  final long deadlineNs;

  /** An ack, nack, timeout or release is on its way to the database. */
  boolean settling;

  /** The receiver's credit (and the tenant's and class's counts) was given back. */
  boolean freed;

  InFlight(CachedEvent event, long epoch, AttachedOutlet owner, long firedAtNs, long deadlineNs) {
    this.event = event;
    this.epoch = epoch;
    this.owner = owner;
    this.firedAtNs = firedAtNs;
    this.deadlineNs = deadlineNs;
  }
}
