package dev.sluice.core.queue.dispatch;

import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Outlet;
import java.util.List;

/**
 * An {@link Outlet} as one shard's dispatcher sees it: the outlet's shared credits, plus the events
 * this shard has in flight on it (dispatcher thread only).
 */
public final class AttachedOutlet {
  private final Outlet outlet;
  private final String shard;

  /** Events this shard sent and not yet settled; dispatcher thread only. */
  int inFlight;

  public AttachedOutlet(Outlet outlet, String shard) {
    this.outlet = outlet;
    this.shard = shard;
  }

  public Outlet outlet() {
    return outlet;
  }

  public String shard() {
    return shard;
  }

  public String receiverId() {
    return outlet.id();
  }

  public long streamId() {
    return outlet.streamId();
  }

  public int maxInFlight() {
    return outlet.maxInFlight();
  }

  public boolean draining() {
    return outlet.draining();
  }

  public boolean closed() {
    return outlet.closed();
  }

  /** Free credits, shared with the outlet's other shards. */
  int freeSlots() {
    return outlet.free();
  }

  boolean tryReserve(String workClass) {
    if (outlet.tryReserve(workClass)) {
      inFlight++;
      return true;
    }
    return false;
  }

  void unreserve(String workClass) {
    inFlight--;
    outlet.unreserve(workClass);
  }

  int classInFlight(String workClass) {
    return outlet.classInFlight(workClass);
  }

  boolean acceptsTenant(String tenant) {
    return outlet.acceptsTenant(tenant);
  }

  void deliver(List<Delivery> batch) {
    outlet.deliver(shard, batch);
  }

  @Override
  public String toString() {
    return outlet + " on shard " + shard;
  }
}
