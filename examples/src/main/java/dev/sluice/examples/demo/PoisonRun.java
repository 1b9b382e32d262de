package dev.sluice.examples.demo;

import dev.sluice.examples.demo.PoisonLedger.Expect;
import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ManagerConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * What a {@link Fault} works with: the poison tables, receivers, canaries and ledgers, the demo's
 * in-process manager and its config. Small helpers shared by the faults live here too.
 */
final class PoisonRun {
  final PoisonTables tables;
  final PoisonTally tally;
  final PoisonReceivers receivers;
  final Canaries canaries;
  final PoisonLedger ledger;
  final SluiceServer manager;
  final ManagerConfig config;
  final Clock clock;
  private final Progress progress;

  PoisonRun(
      PoisonTables tables,
      PoisonTally tally,
      PoisonReceivers receivers,
      Canaries canaries,
      PoisonLedger ledger,
      SluiceServer manager,
      ManagerConfig config,
      Clock clock,
      Progress progress) {
    this.tables = tables;
    this.tally = tally;
    this.receivers = receivers;
    this.canaries = canaries;
    this.ledger = ledger;
    this.manager = manager;
    this.config = config;
    this.clock = clock;
    this.progress = progress;
  }

  void note(String what) {
    progress.note("poison: " + what);
  }

  /** The wall clock in ns since the epoch, as receivers stamp what they see. */
  long wallNs() {
    Instant now = clock.instant();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** Inserts one event, due now, and records how it must end. */
  long add(String queue, String label, Expect expect) throws SQLException {
    return add(queue, label, null, null, null, expect);
  }

  /** Inserts one event and records how it must end; see {@link PoisonTables#insert}. */
  long add(String queue, String label, byte[] payload, Long dueNs, Long epoch, Expect expect)
      throws SQLException {
    long id = tables.insert(queue, label, payload, dueNs, epoch);
    ledger.added(queue, id, expect, dueNs == null ? 0 : dueNs);
    return id;
  }

  /** Inserts {@code n} events due now, all to be delivered; returns their ids. */
  List<Long> addMany(String queue, String label, int n) throws SQLException {
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(add(queue, label, Expect.DELIVERED));
    }
    return ids;
  }

  /** Starts a queue's receiver and its canaries (a canary a second from now on). */
  void serve(String queue, Duration subscribeWait) {
    receivers.start(queue, subscribeWait);
    canaries.watch(
        queue, () -> add(queue, "canary", null, null, null, PoisonLedger.Expect.DELIVERED));
  }

  /** The ids among {@code ids} whose row is not acked, with their state. */
  String notAcked(String queue, List<Long> ids) throws SQLException {
    Map<Long, Integer> states = tables.states(queue);
    List<String> bad = new ArrayList<>();
    for (long id : ids) {
      int s = states.getOrDefault(id, -1);
      if (s != PoisonTables.ACKED) {
        bad.add(id + " (state " + s + ")");
      }
    }
    return bad.isEmpty() ? "" : String.join(", ", bad);
  }

  /** Whether every one of {@code ids} is acked. */
  boolean allAcked(String queue, List<Long> ids) throws SQLException {
    return notAcked(queue, ids).isEmpty();
  }

  /** Waits until the condition holds or the time is up; returns whether it held. */
  static boolean await(Duration max, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(100);
    }
  }

  /** Like {@link #await} for a condition that reads the database (an error counts as false). */
  static boolean awaitDb(Duration max, SqlCondition condition) throws InterruptedException {
    return await(
        max,
        () -> {
          try {
            return condition.holds();
          } catch (SQLException e) {
            return false;
          }
        });
  }

  /** A condition that reads the database. */
  interface SqlCondition {
    boolean holds() throws SQLException;
  }

  /**
   * The manager's count of bad rows skipped in a queue ({@code sluice_bad_rows_total}), or -1 when
   * the manager has no such metric.
   */
  long badRows(String queue) {
    MeterRegistry r = manager.registry();
    long n = -1;
    for (String name : List.of("sluice.bad.rows")) {
      for (Counter c : r.find(name).counters()) {
        String q = c.getId().getTag("queue");
        if (q == null || q.equals(queue)) {
          n = Math.max(n, 0) + (long) c.count();
        }
      }
    }
    return n;
  }
}
