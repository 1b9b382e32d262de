package dev.sluice.bench;

import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletCredits;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-process outlet that takes every event it is given and never answers: what it is given stays
 * in flight (fired) until the queue's ack deadline. Counts deliveries and the shards serving it
 * into counters shared by all the outlets of a run. Any thread (atomics only).
 */
final class HoldingOutlet implements Outlet {
  private final long streamId;
  private final AtomicLong delivered;
  private final AtomicInteger attached;
  private final OutletCredits credits;

  HoldingOutlet(long streamId, int max, AtomicLong delivered, AtomicInteger attached) {
    this.streamId = streamId;
    this.credits = new OutletCredits(max);
    this.delivered = delivered;
    this.attached = attached;
  }

  @Override
  public String id() {
    return "holding-" + streamId;
  }

  @Override
  public long streamId() {
    return streamId;
  }

  @Override
  public int maxInFlight() {
    return credits.max();
  }

  @Override
  public int free() {
    return credits.free();
  }

  @Override
  public boolean tryReserve(String workClass) {
    return credits.tryTake();
  }

  @Override
  public void unreserve(String workClass) {
    credits.giveBack();
  }

  @Override
  public void deliver(String shard, List<Delivery> batch) {
    delivered.addAndGet(batch.size());
  }

  @Override
  public void shardChanged(String shard, boolean serving) {
    attached.addAndGet(serving ? 1 : -1);
  }
}
