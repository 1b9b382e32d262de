package dev.sluice.bench;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.store.EventRef;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * An in-process outlet of one {@link QueueEngine} that acks every event it is given, from a thread
 * of its own (never the dispatcher's), and tells {@link DeliveryGaps} when each shard's events
 * arrived. Any thread may deliver; the acks run on the outlet's single acking thread.
 */
final class AckingOutlet extends CreditedOutlet {
  private final String id;
  private final QueueEngine engine;
  private final String queue;
  private final DeliveryGaps gaps;
  private final ExecutorService acker;

  AckingOutlet(String id, QueueEngine engine, String queue, int max, DeliveryGaps gaps) {
    super(max);
    this.id = id;
    this.engine = engine;
    this.queue = queue;
    this.gaps = gaps;
    this.acker = Executors.newSingleThreadExecutor(r -> new Thread(r, "bench-acker-" + id));
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public long streamId() {
    return id.hashCode() & 0x7fffffffL;
  }

  @Override
  public void deliver(String shard, List<Delivery> batch) {
    gaps.delivered(shard, System.nanoTime());
    List<EventRef> refs = batch.stream().map(d -> new EventRef(d.id(), d.epoch())).toList();
    acker.execute(
        () -> {
          engine.outcomes(queue, shard).acked(this, refs);
          for (int i = 0; i < refs.size(); i++) {
            credits.giveBack();
          }
        });
  }

  @Override
  public void close(String why) {
    acker.shutdown();
  }
}
