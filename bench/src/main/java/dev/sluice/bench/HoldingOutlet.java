package dev.sluice.bench;

import dev.sluice.core.outlet.Delivery;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-process outlet that takes every event it is given and never answers: what it is given stays
 * in flight (fired) until the queue's ack deadline. Counts deliveries and the shards serving it
 * into counters shared by all the outlets of a run. Any thread (atomics only).
 */
final class HoldingOutlet extends CreditedOutlet {
  private final long streamId;
  private final AtomicLong delivered;
  private final AtomicInteger attached;

  HoldingOutlet(long streamId, int max, AtomicLong delivered, AtomicInteger attached) {
    super(max);
    this.streamId = streamId;
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
  public void deliver(String shard, List<Delivery> batch) {
    delivered.addAndGet(batch.size());
  }

  @Override
  public void shardChanged(String shard, boolean serving) {
    attached.addAndGet(serving ? 1 : -1);
  }
}
