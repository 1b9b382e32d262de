package dev.sluice.core.outlet;

import java.util.List;

/**
 * A destination for a queue's due events: a gRPC receiver stream, a broker channel. The core fires
 * events only while an outlet has free credits, hands each fired batch to {@link #deliver}, and
 * learns the outcome through the {@link OutletOutcomes} of the queue it is attached to: ack, nack
 * (with a retry-after), or nothing — then the event's ack deadline returns it to pending.
 *
 * <h2>Credits</h2>
 *
 * An outlet has {@link #maxInFlight} credits, shared by every shard it is attached to; one is taken
 * ({@link #tryReserve}) per event fired to it and given back ({@link #unreserve}) once the event is
 * settled or released. Fairness, {@code max_qps}, {@code max_concurrency} and tenant caps are
 * applied by the core on top of them, alike for every kind of outlet.
 *
 * <h2>Threads</h2>
 *
 * Every method is called by a shard's dispatcher thread, and an outlet attached to several shards
 * is called by several of them: the credit methods must be safe across threads (an atomic counter
 * is enough). {@link #deliver} must not block: it queues the batch for the outlet's own I/O
 * threads. Outcomes may come back on any thread.
 */
public interface Outlet {

  /** Who this is, for logs, status and errors ("receiver r1", "channel orders-kafka"). */
  String id();

  /** Unique for this attachment within the process. */
  long streamId();

  /** Credits in all. */
  int maxInFlight();

  /** Credits free now, across all the shards it is attached to. */
  int free();

  /** Takes one credit for an event of {@code workClass}; false when none is free. */
  boolean tryReserve(String workClass);

  /** Gives back a credit {@link #tryReserve} took. */
  void unreserve(String workClass);

  /** Events of {@code workClass} in flight on this outlet (for class shares); 0 when unknown. */
  default int classInFlight(String workClass) {
    return 0;
  }

  /**
   * Whether events of {@code tenant} may go to this outlet (a receiver's principal may be limited).
   */
  default boolean acceptsTenant(String tenant) {
    return true;
  }

  /** Who opened it, for an operator's "drain the receiver r1 of principal p". */
  default String principal() {
    return "";
  }

  /** Takes no new events from now on; what it holds is still settled. */
  default void drain() {}

  /** Takes no new events, but settles what it holds. */
  default boolean draining() {
    return false;
  }

  /** Gone: what it held is released. */
  default boolean closed() {
    return false;
  }

  /** The manager is stopping: end (a receiver is told to reconnect elsewhere). */
  default void close(String why) {}

  /** Sends events fired to it on {@code shard}. Dispatcher thread; must not block. */
  void deliver(String shard, List<Delivery> batch);

  /** What the database made of the acks and nacks this outlet sent (ack batcher thread). */
  default void settled(String shard, List<Settled> results) {}

  /** {@code shard} stopped or started serving this outlet's queue. */
  default void shardChanged(String shard, boolean serving) {}
}
