package dev.sluice.core.shard;

import dev.sluice.core.loop.ShardGate;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.EventStore;
import dev.sluice.db.store.Fence;
import dev.sluice.db.store.FencedOffException;
import dev.sluice.db.store.GroupStore;
import dev.sluice.db.store.ScheduleStore;
import dev.sluice.db.store.Stores;
import java.util.function.Consumer;

/**
 * Fencing: one leadership term of a shard. Its gate is open from {@link ShardLeadership#lead} until
 * the step-down closes it (from then on no queue of the term fires); its fence is the term's lease
 * token, on which every leader write of its queues is conditioned, so that the first write refused
 * (another manager took the lease) stops the shard at once. Immutable but the gate, which any
 * thread may close.
 */
final class LeaderTerm {
  private final ShardGate gate = new ShardGate();

  /** Null before the first term. */
  private final Fence fence;

  private LeaderTerm(Fence fence) {
    this.fence = fence;
  }

  /** Before the first term: an open gate and no fence. */
  static LeaderTerm none() {
    return new LeaderTerm(null);
  }

  /** A term of lease {@code token}; {@code fencedOff} hears of each write the fence refused. */
  static LeaderTerm of(String shard, long token, Consumer<FencedOffException> fencedOff) {
    return new LeaderTerm(new Fence(shard, token, fencedOff));
  }

  ShardGate gate() {
    return gate;
  }

  /** No lock, no database call: no queue of this term fires from now on. */
  void close() {
    gate.close();
  }

  /** Whether a refusal carrying {@code token} is this term's (not an earlier term's store's). */
  boolean refused(FencedOffException e) {
    return fence != null && fence.token() == e.token();
  }

  /** The leader's store of a queue table: its writes are fenced by this term's lease token. */
  EventStore leaderStore(Stores stores, QueueTable table) {
    return stores.events(table, fence);
  }

  /** The leader's store of the shard's event groups: its writes are fenced by this term's token. */
  GroupStore groupStore(Stores stores) {
    return stores.groups(fence);
  }

  /** The leader's store of the shard's schedules: its writes are fenced by this term's token. */
  ScheduleStore scheduleStore(Stores stores) {
    return stores.schedules(fence);
  }
}
