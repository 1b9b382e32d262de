package dev.sluice.db.store;

import java.util.function.Consumer;

/**
 * The lease a leader's writes are conditioned on: shard {@code shard}, taken with {@code token}.
 * Each state-changing statement of the leader's {@link JdbcEventStore} ends with {@link #SQL}
 * (bound to {@link #shard} and {@link #token}), so that it changes nothing once another take of the
 * lease has written a new token to {@code sluice_fence} (migration V7).
 *
 * <p>The condition share-locks the fence row for the statement (or the fire's transaction) under
 * REPEATABLE READ, the isolation Sluice's pools use; a takeover's write of the row waits for the
 * statements in progress. Renewals never write the fence row, so they never wait for them.
 *
 * <p>Detection is lazy: only when a fenced write changed fewer rows than it had to does the store
 * read the fence row ({@link #CHECK_SQL}); when the token there is another, it tells {@code
 * onFencedOff} and throws {@link FencedOffException}.
 */
public final class Fence {
  /** The condition: two values, the shard and the token. */
  static final String EXISTS =
      "exists (select 1 from `sluice_fence` where `sluice_fence`.`shard` = ?"
          + " and `sluice_fence`.`token` = ?)";

  /** The condition, to append to a WHERE clause. */
  static final String SQL = " and " + EXISTS;

  /** The fence's current token, read as a locking read (the latest committed, in a transaction). */
  static final String CHECK_SQL =
      "select `token`, `owner` from `sluice_fence` where `shard` = ? lock in share mode";

  private final String shard;
  private final long token;
  private final Consumer<FencedOffException> onFencedOff;

  /**
   * @param onFencedOff told (on the writing thread, before the exception is thrown) each time a
   *     write is refused; must not block
   */
  public Fence(String shard, long token, Consumer<FencedOffException> onFencedOff) {
    this.shard = shard;
    this.token = token;
    this.onFencedOff = onFencedOff == null ? e -> {} : onFencedOff;
  }

  public String shard() {
    return shard;
  }

  public long token() {
    return token;
  }

  /**
   * What the fence row holds ({@code current}: its token, or null when there is no row): null when
   * it is still ours, else the exception to throw (the listener has been told).
   */
  FencedOffException refused(String queue, Long current, String owner) {
    if (current != null && current == token) {
      return null;
    }
    FencedOffException e = new FencedOffException(shard, queue, token, current, owner);
    onFencedOff.accept(e);
    return e;
  }

  /**
   * After a fenced write in transaction {@code c} changed fewer rows than it had to: rolls the
   * transaction back, and throws when the fence refused it ({@link #check}); else returns, nothing
   * written, for the caller to say what changed instead.
   *
   * @throws FencedOffException when the fence holds another token
   */
  static void rollBack(Fence fence, java.sql.Connection c, String queue)
      throws java.sql.SQLException {
    FencedOffException refused = check(fence, c, queue);
    c.rollback();
    if (refused != null) {
      throw refused;
    }
  }

  /** {@link #SQL} for a fenced writer, "" for an unfenced one ({@code fence} null). */
  static String sql(Fence fence) {
    return fence == null ? "" : SQL;
  }

  /** Binds {@code fence}'s shard and token at {@code at} and after (nothing when unfenced). */
  static void bind(Fence fence, java.sql.PreparedStatement ps, int at)
      throws java.sql.SQLException {
    if (fence != null) {
      ps.setString(at, fence.shard());
      ps.setLong(at + 1, fence.token());
    }
  }

  /**
   * After a fenced write matched nothing: reads the fence row on {@code c} (in its transaction) and
   * returns the refusal when the lease is another's (the listener told), else null; null too for an
   * unfenced writer. {@code what} names what was written, for the message.
   */
  static FencedOffException check(Fence fence, java.sql.Connection c, String what)
      throws java.sql.SQLException {
    if (fence == null) {
      return null;
    }
    try (java.sql.PreparedStatement ps = c.prepareStatement(CHECK_SQL)) {
      ps.setString(1, fence.shard());
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? fence.refused(what, rs.getLong(1), rs.getString(2))
            : fence.refused(what, null, null);
      }
    }
  }

  @Override
  public String toString() {
    return "fence(shard " + shard + ", token " + token + ")";
  }
}
