package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.NOW_NS_SQL;

import dev.sluice.db.Jooq;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Record;

/** {@link LeaseStore} on the tables of Sluice's own migrations. Times are the server's. */
public final class JdbcLeaseStore implements LeaseStore {
  private final DSLContext ctx;

  /** Shards whose lease row is known to exist: no INSERT IGNORE on every round. */
  private final java.util.Set<String> rows = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** MariaDB has no super_read_only; asked once, not every round. */
  private volatile boolean superReadOnlyKnown = true;

  /**
   * Takes a free or expired lease, or renews one still held. The token (a fencing token) grows on
   * every take, by another owner or by the same one after a release or expiry.
   */
  private static final String TAKE_OR_RENEW =
      "UPDATE sluice_lease SET token = IF(owner = ? AND expires_ns >= "
          + NOW_NS_SQL
          + ", token, token + 1), owner = ?,"
          + " expires_ns = "
          + NOW_NS_SQL
          + " + ?, renewed_ns = "
          + NOW_NS_SQL
          + " WHERE shard = ? AND (owner = ? OR expires_ns < "
          + NOW_NS_SQL
          + ")";

  public JdbcLeaseStore(DataSource ds) {
    this.ctx = Jooq.context(ds);
  }

  @Override
  public Lease acquire(String shard, String owner, long ttlNs) {
    if (!rows.contains(shard)) {
      ctx.execute("INSERT IGNORE INTO sluice_lease (shard) VALUES (?)", shard);
      rows.add(shard);
    }
    // One transaction: the take and the fence row move together. Writing the fence row waits for
    // the previous holder's fenced statements still running (they share-lock it), so once this
    // commits none of them can apply any more. The lease row stays locked meanwhile, and the
    // previous holder's renewal, waiting on it, then finds the lease gone.
    return ctx.transactionResult(
        cfg -> {
          DSLContext tx = org.jooq.impl.DSL.using(cfg);
          tx.execute(TAKE_OR_RENEW, owner, owner, ttlNs, shard, owner);
          Record r =
              tx.fetchOne(
                  "SELECT owner, token, expires_ns FROM sluice_lease WHERE shard = ?", shard);
          String o = r.get(0, String.class);
          long token = r.get(1, Long.class);
          boolean held = owner.equals(o);
          if (held) {
            tx.execute(
                "INSERT INTO sluice_fence (shard, owner, token) VALUES (?, ?, ?)"
                    + " ON DUPLICATE KEY UPDATE owner = VALUES(owner), token = VALUES(token)",
                shard,
                owner,
                token);
          }
          return new Lease(held, o, token, r.get(2, Long.class));
        });
  }

  /**
   * One UPDATE: renewed_ns always changes, so one row changed means the lease is ours. It never
   * touches {@code sluice_fence}, so it never waits for a fenced write (which may itself wait on an
   * application's row lock).
   */
  @Override
  public boolean renew(String shard, String owner, long ttlNs) {
    return ctx.execute(TAKE_OR_RENEW, owner, owner, ttlNs, shard, owner) == 1;
  }

  @Override
  public void release(String shard, String owner) {
    ctx.execute(
        "UPDATE sluice_lease SET expires_ns = 0 WHERE shard = ? AND owner = ?", shard, owner);
  }

  @Override
  public boolean readOnly() {
    Object ro = ctx.fetchValue("SELECT @@global.read_only");
    boolean readOnly =
        ro != null && !"0".equals(ro.toString()) && !"OFF".equalsIgnoreCase(ro.toString());
    if (!readOnly && superReadOnlyKnown) {
      try {
        Object sro = ctx.fetchValue("SELECT @@global.super_read_only");
        readOnly =
            sro != null && !"0".equals(sro.toString()) && !"OFF".equalsIgnoreCase(sro.toString());
      } catch (org.jooq.exception.DataAccessException e) {
        // MariaDB has no super_read_only: read_only is the whole story there.
        superReadOnlyKnown = false;
      }
    }
    return readOnly;
  }

  @Override
  public Heartbeat heartbeat(String managerId, String instance, long ttlNs) {
    // Assignments apply left to right: the instance first (kept unless ours or gone quiet), then
    // the heartbeat, only if the row is ours now.
    ctx.execute(
        "INSERT INTO sluice_manager (id, heartbeat_ns, instance) VALUES (?, "
            + NOW_NS_SQL
            + ", ?) ON DUPLICATE KEY UPDATE instance = IF(instance = ? OR heartbeat_ns <= "
            + NOW_NS_SQL
            + " - ?, ?, instance), heartbeat_ns = IF(instance = ?, "
            + NOW_NS_SQL
            + ", heartbeat_ns)",
        managerId,
        instance,
        instance,
        ttlNs,
        instance,
        instance);
    Object holder = ctx.fetchValue("SELECT instance FROM sluice_manager WHERE id = ?", managerId);
    Object n =
        ctx.fetchValue(
            "SELECT COUNT(*) FROM sluice_manager WHERE heartbeat_ns > " + NOW_NS_SQL + " - ?",
            ttlNs);
    String h = holder == null ? "" : holder.toString();
    return new Heartbeat(
        n instanceof Number num ? Math.max(1, num.intValue()) : 1, instance.equals(h), h);
  }

  @Override
  public void leave(String managerId, String instance) {
    ctx.execute("DELETE FROM sluice_manager WHERE id = ? AND instance = ?", managerId, instance);
  }
}
