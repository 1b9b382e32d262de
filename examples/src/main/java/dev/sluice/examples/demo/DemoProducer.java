package dev.sluice.examples.demo;

import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The application side: writes an order and its event in one transaction, at a steady rate, the way
 * a real service would use Sluice. On purpose, about 10% of transactions roll back (their events
 * must never fire), about 10% schedule the event 1–5 s ahead, and about a third of those are
 * cancelled over gRPC right after commit, while still in the future (they must never fire either).
 *
 * <p>With several shards each order goes, with its event in the same transaction, to the shard that
 * {@link dev.sluice.db.ShardRouter} picks for its order id.
 */
final class DemoProducer implements Runnable {
  static final double ROLLBACK_RATE = 0.10;
  static final double SCHEDULE_RATE = 0.10;
  static final double CANCEL_RATE_OF_SCHEDULED = 0.30;

  private final DemoDatabase db;
  private final Canceller canceller;
  private final Ledger ledger;
  private final int orders;
  private final long periodNs;
  private final Random random;
  private final BooleanSupplier enough;

  /**
   * @param orders transactions to run, each writing one order and one event
   * @param ratePerSecond transactions per second; a steady pace keeps the demo live for a while
   */
  DemoProducer(
      DemoDatabase db,
      Canceller canceller,
      Ledger ledger,
      int orders,
      int ratePerSecond,
      long seed) {
    this(db, canceller, ledger, orders, ratePerSecond, seed, () -> false);
  }

  /**
   * Like the other, but stops early, before its next transaction, once {@code enough} says so (the
   * poison demo's producer runs while the faults are injected, not longer).
   */
  DemoProducer(
      DemoDatabase db,
      Canceller canceller,
      Ledger ledger,
      int orders,
      int ratePerSecond,
      long seed,
      BooleanSupplier enough) {
    this.db = db;
    this.canceller = canceller;
    this.ledger = ledger;
    this.orders = orders;
    this.periodNs = 1_000_000_000L / ratePerSecond;
    this.random = new Random(seed);
    this.enough = enough;
  }

  @Override
  public void run() {
    long start = System.nanoTime();
    for (long orderId = 1; orderId <= orders; orderId++) {
      // Pacing against the start time (not the previous transaction) keeps the average rate
      // steady even when one transaction is slow.
      long due = start + (orderId - 1) * periodNs;
      long wait;
      while ((wait = due - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      if (Thread.currentThread().isInterrupted() || enough.getAsBoolean()) {
        return;
      }
      produce(orderId);
    }
  }

  private void produce(long orderId) {
    write(db.shardFor(orderId), canceller, ledger, orderId, Plan.draw(random), Map.of());
  }

  /**
   * One transaction's choices, drawn up front so that a given seed always makes the same plan.
   *
   * @param delay how far ahead the event is scheduled; null for now
   */
  record Plan(
      boolean rollback, Duration delay, boolean cancel, String customer, BigDecimal amount) {
    static Plan draw(Random random) {
      boolean rollback = random.nextDouble() < ROLLBACK_RATE;
      Duration delay =
          random.nextDouble() < SCHEDULE_RATE
              ? Duration.ofMillis(1000 + random.nextInt(4001))
              : null;
      boolean cancel = delay != null && random.nextDouble() < CANCEL_RATE_OF_SCHEDULED;
      String customer = "customer-" + (1 + random.nextInt(50));
      BigDecimal amount = BigDecimal.valueOf(100 + random.nextInt(99_900), 2);
      return new Plan(rollback, delay, cancel, customer, amount);
    }
  }

  /**
   * Writes an order and its event in one transaction on {@code shard}, as planned (committed or
   * rolled back, scheduled ahead, then cancelled), and tells the ledger. Called on the producing
   * thread.
   *
   * @param extra more columns of the event (the ordering key and number, with --ordered)
   */
  static void write(
      DemoDatabase.Shard shard,
      Canceller canceller,
      Ledger ledger,
      long orderId,
      Plan plan,
      Map<String, Object> extra) {
    long eventId;
    try (Connection c = shard.pool().getConnection()) {
      c.setAutoCommit(false);
      try {
        insertOrder(c, orderId, plan.customer(), plan.amount());
        EventOptions options =
            plan.delay() == null
                ? EventOptions.DEFAULTS
                : EventOptions.builder().delay(plan.delay()).build();
        Map<String, Object> columns = new HashMap<>(extra);
        columns.put("order_id", orderId);
        columns.put("customer", plan.customer());
        eventId = EventProducer.insert(c, DemoDatabase.QUEUE, columns, options);
        if (plan.rollback()) {
          c.rollback();
          ledger.rolledBack(orderId);
          return;
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        rollbackQuietly(c);
        throw e;
      }
    } catch (SQLException e) {
      ledger.failed(shard.name(), orderId);
      return;
    }
    EventKey event = new EventKey(shard.name(), eventId);
    ledger.committed(event, orderId, plan.delay() != null);
    if (plan.cancel()) {
      // Right after commit, while the event is still 1-5 s in the future: the cancel must win.
      ledger.cancelAnswered(event, canceller.cancel(event));
    }
  }

  static void insertOrder(Connection c, long id, String customer, BigDecimal amount)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO orders (id, customer, amount, created) VALUES (?, ?, ?, NOW(6))")) {
      ps.setLong(1, id);
      ps.setString(2, customer);
      ps.setBigDecimal(3, amount);
      ps.executeUpdate();
    }
  }

  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException ignored) {
      // The connection is broken; the pool discards it and the server rolls back.
    }
  }
}
