package dev.sluice.core.shard;

/**
 * Keeps this process's share of shard leases fair: with S shards and M live managers it holds at
 * most ceil(S/M). Shared by the shards' {@link LeaseKeeper}s; synchronized, so that two keepers
 * cannot both take the last slot or both give up the one extra.
 */
public final class LeaseBalancer {
  private final int shards;
  private int held;
  private int managers = 1;

  public LeaseBalancer(int shards) {
    this.shards = shards;
  }

  synchronized void managers(int m) {
    this.managers = Math.max(1, m);
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
