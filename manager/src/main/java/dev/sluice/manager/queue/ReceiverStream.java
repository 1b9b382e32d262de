package dev.sluice.manager.queue;

import dev.sluice.proto.v1.ManagerMessage;

/**
 * A {@link Subscription} as one shard's dispatcher sees it: the shared credits and call, plus the
 * events this shard has in flight on it (dispatcher thread only).
 */
public final class ReceiverStream {
  private final Subscription sub;
  private final String shard;

  /** Events this shard sent and not yet settled; dispatcher thread only. */
  int inFlight;

  public ReceiverStream(Subscription sub, String shard) {
    this.sub = sub;
    this.shard = shard;
  }

  public Subscription subscription() {
    return sub;
  }

  public String shard() {
    return shard;
  }

  public String receiverId() {
    return sub.receiverId();
  }

  public String queue() {
    return sub.queue();
  }

  public long streamId() {
    return sub.streamId();
  }

  public int maxInFlight() {
    return sub.maxInFlight();
  }

  public boolean draining() {
    return sub.draining();
  }

  public boolean closed() {
    return sub.closed();
  }

  /** Free credits, shared with the subscription's other shards. */
  int freeSlots() {
    return sub.free();
  }

  boolean tryReserve(String workClass) {
    if (sub.tryReserve(workClass)) {
      inFlight++;
      return true;
    }
    return false;
  }

  void unreserve(String workClass) {
    inFlight--;
    sub.unreserve(workClass);
  }

  int classInFlight(String workClass) {
    return sub.classInFlight(workClass);
  }

  public boolean send(ManagerMessage m) {
    return sub.send(m);
  }

  @Override
  public String toString() {
    return sub + " on shard " + shard;
  }
}
