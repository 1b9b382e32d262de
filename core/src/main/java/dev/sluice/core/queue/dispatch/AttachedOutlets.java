package dev.sluice.core.queue.dispatch;

import dev.sluice.core.outlet.Nack;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletOutcomes;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.db.store.EventRef;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outlets attached to one queue on one shard, by stream id, and what they report back: each
 * attach, detach, ack, commit, nack and release becomes a {@link DispatcherCommand} posted to the
 * dispatcher's inbox. Safe from any thread (a concurrent map; the inbox).
 */
public final class AttachedOutlets implements OutletOutcomes {
  private static final Logger log = LoggerFactory.getLogger(AttachedOutlets.class);

  private final QueueContext ctx;

  /** Where the outlets' news goes: the dispatcher's inbox. */
  private final Inbox dispatcher;

  /** Attached streams by stream id, for lookups by receiver id from gRPC threads. */
  private final Map<Long, AttachedOutlet> streams = new ConcurrentHashMap<>();

  public AttachedOutlets(QueueContext ctx, Inbox dispatcher) {
    this.ctx = ctx;
    this.dispatcher = dispatcher;
  }

  /** Starts sending this shard's events to an outlet (sharing its credits with other shards). */
  public void attach(Outlet outlet) {
    AttachedOutlet r = new AttachedOutlet(outlet, ctx.shard());
    if (streams.putIfAbsent(outlet.streamId(), r) != null) {
      return;
    }
    dispatcher.post(new DispatcherCommand.Attach(r));
    outlet.shardChanged(ctx.shard(), true);
    log.info("{}: {} attached, max_in_flight={}", ctx.where(), outlet, outlet.maxInFlight());
  }

  /** Stops sending to an outlet; what it holds from this shard is released at once. */
  public void detach(Outlet outlet, String why) {
    AttachedOutlet r = streams.remove(outlet.streamId());
    if (r != null) {
      outlet.shardChanged(ctx.shard(), false);
      dispatcher.post(new DispatcherCommand.Detach(r, why));
    }
  }

  /** The queue stops: every outlet hears this shard no longer serves it. */
  public void detachAll() {
    for (AttachedOutlet r : streams.values()) {
      r.outlet().shardChanged(ctx.shard(), false);
    }
    streams.clear();
  }

  private AttachedOutlet streamOf(Outlet from) {
    AttachedOutlet r = streams.get(from.streamId());
    // Not attached here (any more): the answer still goes back to the outlet.
    return r != null ? r : new AttachedOutlet(from, ctx.shard());
  }

  @Override
  public void acked(Outlet from, List<EventRef> refs) {
    dispatcher.post(new DispatcherCommand.Acked(streamOf(from), refs));
  }

  @Override
  public void committed(Outlet from, List<EventRef> refs) {
    dispatcher.post(new DispatcherCommand.Committed(streamOf(from), refs));
  }

  @Override
  public void nacked(Outlet from, List<Nack> nacks) {
    dispatcher.post(new DispatcherCommand.Nacked(streamOf(from), nacks));
  }

  @Override
  public void released(Outlet from, List<EventRef> refs, String why) {
    dispatcher.post(new DispatcherCommand.Released(streamOf(from), refs, why));
  }

  /**
   * Stops new sends to every stream of a receiver opened by {@code principal}. Returns how many
   * streams that was here.
   */
  public int drainReceiver(String receiverId, String principal) {
    int n = 0;
    for (AttachedOutlet r : streams.values()) {
      if (r.receiverId().equals(receiverId) && r.outlet().principal().equals(principal)) {
        r.outlet().drain();
        n++;
      }
    }
    if (n > 0) {
      log.info("{}: receiver {} is shutting down; no new sends", ctx.where(), receiverId);
    }
    return n;
  }
}
