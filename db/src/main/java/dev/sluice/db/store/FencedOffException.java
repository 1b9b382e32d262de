package dev.sluice.db.store;

/**
 * A leader's write refused by the {@link Fence}: the shard's lease was taken by another manager
 * (another token) since this one took it. Nothing of the refused write applied; the shard must stop
 * being led here at once.
 */
public final class FencedOffException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String shard;
  private final long token;

  FencedOffException(String shard, String queue, long token, Long current, String owner) {
    super(
        "shard "
            + shard
            + ": fenced off: queue "
            + queue
            + ": a write with lease token "
            + token
            + " was refused; the shard's lease now has "
            + (current == null ? "no fence" : "token " + current + " (owner '" + owner + "')")
            + ", so this manager no longer leads it");
    this.shard = shard;
    this.token = token;
  }

  public String shard() {
    return shard;
  }

  public long token() {
    return token;
  }
}
