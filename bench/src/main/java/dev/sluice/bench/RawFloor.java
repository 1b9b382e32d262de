package dev.sluice.bench;

import dev.sluice.db.QueueConvention;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

/**
 * The raw SQL floor: the statements Sluice cannot avoid per event, issued by plain JDBC loops on
 * the same table shape, with none of the manager's work around them (no window, no gRPC, no
 * receivers).
 *
 * <p>It mirrors the manager's pipeline and batching: a "fire" thread reads due rows the way the
 * poller does ({@code cache_size} rows per query) and moves them pending → fired in batches of
 * {@code Dispatcher.MAX_BATCH} (256) with the compare-and-set UPDATE ({@code WHERE id IN (...) AND
 * state = 0 AND epoch = ?}, then COMMIT); an "ack" thread takes what has been fired, up to {@code
 * AckBatcher.MAX_BATCH} (1000) at a time, and moves it fired → acked with the ack's CAS UPDATE and
 * a COMMIT. The only thing it leaves out is what a manager needs beyond the statements: delivery.
 */
public final class RawFloor {
  /** The manager's Dispatcher.MAX_BATCH. */
  public static final int FIRE_BATCH = 256;

  /** The manager's AckBatcher.MAX_BATCH. */
  public static final int ACK_BATCH = 1000;

  /** The queue's cache_size: rows read per poll. */
  public static final int POLL_LIMIT = 10_000;

  private static final long ACK_WAIT_NS = TimeUnit.SECONDS.toNanos(30);

  private final DataSource ds;
  private final AtomicLong fired = new AtomicLong();
  private final AtomicLong acked = new AtomicLong();

  public RawFloor(DataSource ds) {
    this.ds = ds;
  }

  public long fired() {
    return fired.get();
  }

  public long acked() {
    return acked.get();
  }

  /** Fires and acks {@code n} due events; returns when all are acked. */
  public void drain(long n) throws Exception {
    LinkedBlockingQueue<long[]> toAck = new LinkedBlockingQueue<>();
    AtomicReference<Exception> failure = new AtomicReference<>();
    Thread firer =
        new Thread(
            () -> {
              try {
                fireLoop(n, toAck);
              } catch (Exception e) {
                failure.set(e);
              }
            },
            "floor-fire");
    Thread acker =
        new Thread(
            () -> {
              try {
                ackLoop(n, toAck);
              } catch (Exception e) {
                failure.set(e);
              }
            },
            "floor-ack");
    firer.start();
    acker.start();
    while (acker.isAlive() && failure.get() == null) {
      acker.join(100);
    }
    firer.interrupt();
    acker.interrupt();
    firer.join();
    acker.join();
    if (failure.get() != null) {
      throw failure.get();
    }
  }

  private void fireLoop(long n, LinkedBlockingQueue<long[]> toAck) throws SQLException {
    String poll =
        "SELECT id, epoch, time_next, time_created, priority, tenant, payload FROM "
            + SluiceSide.QUEUE
            + " WHERE state = 0 AND time_next <= ? ORDER BY time_next, id LIMIT "
            + POLL_LIMIT;
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      while (fired.get() < n && !Thread.currentThread().isInterrupted()) {
        List<long[]> rows = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(poll)) {
          ps.setLong(1, nowNs());
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              rows.add(new long[] {rs.getLong(1), rs.getLong(2)});
              rs.getLong(3);
              rs.getLong(4);
              rs.getInt(5);
              rs.getString(6);
              rs.getString(7);
            }
          }
        }
        c.commit();
        for (int from = 0; from < rows.size(); from += FIRE_BATCH) {
          List<long[]> batch = rows.subList(from, Math.min(rows.size(), from + FIRE_BATCH));
          long deadline = nowNs() + ACK_WAIT_NS;
          int changed =
              casUpdate(
                  c,
                  "state = 1, epoch = epoch + 1, time_next = " + deadline,
                  batch,
                  0,
                  batch.get(0)[1]);
          c.commit();
          long[] ids = new long[batch.size()];
          for (int i = 0; i < ids.length; i++) {
            ids[i] = batch.get(i)[0];
          }
          fired.addAndGet(changed);
          toAck.add(ids);
        }
      }
    }
  }

  private void ackLoop(long n, LinkedBlockingQueue<long[]> toAck)
      throws SQLException, InterruptedException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      List<long[]> batch = new ArrayList<>();
      List<long[]> pending = new ArrayList<>();
      while (acked.get() < n) {
        long[] first = toAck.poll(100, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        pending.add(first);
        toAck.drainTo(pending);
        // Up to ACK_BATCH ids per UPDATE, like the ack batcher.
        List<long[]> ids = new ArrayList<>();
        for (long[] chunk : pending) {
          for (long id : chunk) {
            ids.add(new long[] {id, 1});
          }
        }
        pending.clear();
        for (int from = 0; from < ids.size(); from += ACK_BATCH) {
          batch.clear();
          batch.addAll(ids.subList(from, Math.min(ids.size(), from + ACK_BATCH)));
          long now = nowNs();
          int changed =
              casUpdate(c, "state = 2, time_acked = " + now + ", time_next = " + now, batch, 1, 1);
          c.commit();
          acked.addAndGet(changed);
        }
      }
    }
  }

  /** {@code UPDATE ... SET <set> WHERE id IN (...) AND state = ? AND epoch = ?}, ids bound. */
  private static int casUpdate(Connection c, String set, List<long[]> rows, int state, long epoch)
      throws SQLException {
    StringBuilder sql =
        new StringBuilder("UPDATE ")
            .append(SluiceSide.QUEUE)
            .append(" SET ")
            .append(set)
            .append(" WHERE id IN (");
    for (int i = 0; i < rows.size(); i++) {
      sql.append(i == 0 ? "?" : ",?");
    }
    sql.append(") AND state = ? AND epoch = ?");
    try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
      int p = 1;
      for (long[] r : rows) {
        ps.setLong(p++, r[0]);
      }
      ps.setInt(p++, state);
      ps.setLong(p, epoch);
      return ps.executeUpdate();
    }
  }

  private static long nowNs() {
    return Latencies.wallNanos();
  }

  /** Rows in the floor's table use the queue convention's DDL, like Sluice's. */
  public static String ddl() {
    return QueueConvention.createTableSql(
        SluiceSide.QUEUE, List.of("`payload` VARCHAR(32) NULL"), SluiceSide.comment());
  }
}
