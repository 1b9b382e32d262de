package dev.sluice.core.loop;

/**
 * Whether a shard's queues may fire: open for one leadership term, closed once, at the moment the
 * lease keeper learns the shard is no longer this process's (lease lost or given up, primary
 * read-only), before any queue is stopped. Every firer checks it right before each fire UPDATE, so
 * all queues of the shard stop firing in the same moment, without waiting for a lock or for the
 * queues to stop one after another.
 *
 * <p>Thread-safe: a volatile flag; closing takes no lock and makes no database call.
 */
public final class ShardGate {
  /** A gate that never closes (queues not run by a shard manager, tests). */
  public static final ShardGate ALWAYS_OPEN = new ShardGate();

  private volatile boolean open = true;

  public boolean open() {
    return open;
  }

  public void close() {
    if (this != ALWAYS_OPEN) {
      open = false;
    }
  }
}
