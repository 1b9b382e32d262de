package dev.sluice.db.store;

/**
 * Shard leadership on the shard's own primary: the row {@code sluice_lease(shard)} names the one
 * manager allowed to dispatch the shard's queues until {@code expires_ns} (database clock). The
 * token grows with every take (a fencing token), and a leader's every write is conditioned on it
 * ({@link Fence}). Correctness never rests on the lease alone: every event change is also a CAS on
 * its epoch.
 */
public interface LeaseStore {
  /** The lease as read after an attempt. */
  record Lease(boolean held, String owner, long token, long expiresNs) {}

  /**
   * Takes the lease if it is free or expired, or renews it if {@code owner} holds it. When held,
   * the shard's fence ({@code sluice_fence}, see {@link Fence}) names the lease's token from the
   * same transaction on: the writes of every earlier holder are refused from then on.
   */
  Lease acquire(String shard, String owner, long ttlNs);

  /**
   * Renews a lease {@code owner} holds, in one statement; false when it no longer holds it (taken
   * after expiry). The default reads the lease back; implementations may do less.
   */
  default boolean renew(String shard, String owner, long ttlNs) {
    return acquire(shard, owner, ttlNs).held();
  }

  /** Gives the lease up at once (it must be ours). */
  void release(String shard, String owner);

  /** Whether the server refuses writes: {@code read_only} (or MySQL's {@code super_read_only}). */
  boolean readOnly();

  /**
   * What a heartbeat found: how many managers announced themselves within the TTL, and whether the
   * manager id is this process's (false: another live process uses the same id).
   */
  record Heartbeat(int managers, boolean ours, String holder) {}

  /**
   * Announces a live manager: the id's row is this {@code instance}'s if it already was or its last
   * heartbeat is older than {@code ttlNs}; otherwise another live process holds the id and the row
   * is left alone.
   */
  Heartbeat heartbeat(String managerId, String instance, long ttlNs);

  /**
   * Withdraws a manager's announcement (graceful stop), so that the others count one manager less
   * at once instead of when its last heartbeat ages out. Only this instance's.
   */
  void leave(String managerId, String instance);
}
