package dev.sluice.core.shard;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Keeps this process's share of shard leases fair: with S shards and M live managers it holds at
 * most ceil(S/M). Shared by the shards' {@link LeaseKeeper}s; synchronized, so that two keepers
 * cannot both take the last slot or both give up the one extra.
 *
 * <p>When a keeper's heartbeat finds fewer managers (one stopped), the share grows: every keeper of
 * this process is woken at once ({@link #onShareGrown}), so the keeper of a shard that the stopped
 * manager released takes it now, not at its next renew period.
 */
public final class LeaseBalancer {
  private final int shards;
  private int held;
  private int managers = 1;
  private final List<Runnable> wakers = new CopyOnWriteArrayList<>();

  public LeaseBalancer(int shards) {
    this.shards = shards;
  }

  /** {@code wake} runs (on the thread of the heartbeat that saw it) whenever the share grows. */
  void onShareGrown(Runnable wake) {
    wakers.add(wake);
  }

  void forget(Runnable wake) {
    wakers.remove(wake);
  }

  /** The count of live managers, from a heartbeat; wakes every keeper if the share grew. */
  void managers(int m) {
    boolean grew;
    synchronized (this) {
      int before = quota();
      this.managers = Math.max(1, m);
      grew = quota() > before;
    }
    if (grew) {
      wakers.forEach(Runnable::run);
    }
  }

  synchronized int quota() {
    return (shards + managers - 1) / managers;
  }

  /** Reserves a slot before trying to take a free lease. */
  synchronized boolean reserve() {
    if (held >= quota()) {
      return false;
    }
    held++;
    return true;
  }

  /** Undoes a reservation or records a lease given up or lost. */
  synchronized void released() {
    held = Math.max(0, held - 1);
  }

  /** Whether the caller should give up its lease to rebalance; if so, counts it as given up. */
  synchronized boolean shouldGiveUp() {
    if (held > quota()) {
      held--;
      return true;
    }
    return false;
  }

  synchronized int held() {
    return held;
  }
}
