package dev.sluice.examples.demo;

import dev.sluice.client.EventProducer;
import dev.sluice.core.loop.FaultHook;
import dev.sluice.examples.demo.PoisonLedger.Entry;
import dev.sluice.examples.demo.PoisonLedger.Expect;
import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ManagerConfig;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code sluice demo --poison}: while the core demo's producer and receivers run, injects one fault
 * after another (each {@link Fault} on a queue of its own), watches every queue with canaries
 * ({@link Canaries}), and at the end judges each fault's containment, loss and earliness ({@link
 * PoisonReport}).
 *
 * <p>Threads: {@link #start} runs the faults in order on one thread ({@code demo-poison}); {@link
 * #finish} joins it and judges. Receivers' and the canaries' threads report to thread-safe tallies.
 */
final class Poison implements AutoCloseable {
  /**
   * About what the faults take in all: without --events the demo's producer runs until the last
   * fault is injected, at most this long (its receiver is killed half way through that many).
   */
  static final int SECONDS = 60;

  private static final Duration PAUSE = Duration.ofMillis(250);
  private static final Duration SETTLE = Duration.ofSeconds(10);
  private static final long CANARY_ORDERS = 2_000_000_000L;

  /** gRPC's own (java.util.logging) complaints about streams reset by the oversized event. */
  private static final java.util.logging.Logger GRPC_LOG =
      java.util.logging.Logger.getLogger("io.grpc");

  private final List<Fault> faults =
      List.of(
          new UnknownStateFault(),
          new MaxEpochFault(),
          new OversizedFault(),
          new RescheduleFault(),
          new MalformedCommentFault(),
          new AlterTableFault(),
          new RowLockFault(),
          new DuplicateManagerFault(),
          new WorkerDeathFault(),
          new MissingTopicFault(),
          new UnsignedIdFault(),
          new AckTriggerFault(),
          new TenantNoReceiverFault());
  private final Map<Fault, Throwable> failures = new java.util.concurrent.ConcurrentHashMap<>();
  private final PoisonRun run;
  private final PoisonTables tables;
  private final PoisonReceivers receivers;
  private final Canaries canaries;
  private final Thread injector = new Thread(this::injectAll, "demo-poison");
  private boolean closed;

  private Poison(PoisonRun run) {
    this.run = run;
    this.tables = run.tables;
    this.receivers = run.receivers;
    this.canaries = run.canaries;
  }

  /**
   * Creates the poison queues, starts their receivers and the canaries (also into the demo's own
   * queue, as orders the {@link Ledger} knows), then the faults on their own thread.
   */
  static Poison start(
      DemoDatabase db,
      SluiceServer manager,
      ManagerConfig config,
      Ledger demoLedger,
      Progress progress,
      Clock clock)
      throws Exception {
    GRPC_LOG.setLevel(java.util.logging.Level.SEVERE);
    DemoDatabase.Shard shard = db.shards().get(0);
    PoisonTables tables = new PoisonTables(shard);
    PoisonTally tally = new PoisonTally();
    PoisonReceivers receivers =
        new PoisonReceivers("127.0.0.1:" + manager.port(), tally, tables, clock);
    Canaries canaries = new Canaries(tables);
    PoisonRun run =
        new PoisonRun(
            tables,
            tally,
            receivers,
            canaries,
            new PoisonLedger(),
            manager,
            config,
            clock,
            progress);
    Poison p = new Poison(run);
    try {
      for (Fault f : p.faults) {
        if (f.queue() != null) {
          tables.execute(f.createSql());
        }
      }
      // Discovery runs every second: wait until the manager serves every new queue.
      List<String> queues = p.faults.stream().map(Fault::queue).filter(q -> q != null).toList();
      if (!PoisonRun.await(
          Duration.ofSeconds(15),
          () -> queues.stream().allMatch(q -> manager.engine().find(q).isPresent()))) {
        progress.note("poison: not every poison queue is served 15 s after its creation");
      }
      for (Fault f : p.faults) {
        if (f.queue() != null && f.receiverUpFront()) {
          run.serve(f.queue(), Duration.ofSeconds(10));
        }
      }
      AtomicLong orders = new AtomicLong(CANARY_ORDERS);
      canaries.watch(
          DemoDatabase.QUEUE,
          () -> canaryOrder(tables, shard, demoLedger, orders.incrementAndGet()));
      canaries.start();
      p.injector.start();
      return p;
    } catch (Exception | Error e) {
      p.close();
      throw e;
    }
  }

  /** A canary into the demo's queue: an order and its event in one transaction, as the producer. */
  private static long canaryOrder(
      PoisonTables tables, DemoDatabase.Shard shard, Ledger ledger, long orderId)
      throws SQLException {
    long id;
    try (Connection c = tables.connection()) {
      c.setAutoCommit(false);
      try {
        DemoProducer.insertOrder(c, orderId, "canary", BigDecimal.ONE);
        id =
            EventProducer.insert(
                c,
                DemoDatabase.QUEUE,
                Map.of("order_id", orderId, "customer", "canary"),
                EventProducer.EventOptions.DEFAULTS);
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
    ledger.committed(new EventKey(shard.name(), id), orderId, false);
    return id;
  }

  private void injectAll() {
    for (Fault f : faults) {
      try {
        f.inject(run);
        Thread.sleep(PAUSE.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception | Error e) {
        failures.put(f, e);
        run.note("fault '" + f.name() + "' could not be injected: " + e);
      }
    }
    run.note("every fault injected");
  }

  /**
   * Waits for the faults, stops the canaries, lets the poison queues settle, and judges. Call
   * before the manager stops.
   */
  PoisonReport finish() throws Exception {
    injector.join();
    canaries.stopInserting();
    canaries.awaitSettled();
    PoisonRun.awaitDb(SETTLE, this::settled);
    Map<String, String> stalled = canaries.stalled();
    List<PoisonReport.Line> lines = new ArrayList<>();
    int n = 0;
    for (Fault f : faults) {
      n++;
      Fault.Verdict v;
      Throwable failed = failures.get(f);
      if (failed != null) {
        v = Fault.Verdict.of(false, "injection failed: " + failed);
      } else {
        try {
          v = f.judge(run);
        } catch (Exception e) {
          v = Fault.Verdict.of(false, "could not be judged: " + e);
        }
      }
      String stall = f.watchedQueue() == null ? null : stalled.get(f.watchedQueue());
      if (stall != null) {
        v = Fault.Verdict.of(false, v.seen() + "; " + f.watchedQueue() + " STALLED: " + stall);
      }
      lines.add(new PoisonReport.Line(n, f.name(), v));
    }
    List<String> problems = new ArrayList<>();
    long lost = lost(problems);
    long early = early(problems);
    return new PoisonReport(
        lines, stalled, canaries.all(), lost, early, problems, canaries.loopErrors());
  }

  /** Whether the faults are all injected (or given up on): the injecting thread is done. */
  boolean injected() {
    return !injector.isAlive();
  }

  /** Whether every poison event that must end has ended (acked or dead). */
  private boolean settled() throws SQLException {
    for (Map.Entry<String, Map<Long, Entry>> q : run.ledger.all().entrySet()) {
      Map<Long, Integer> states = tables.states(q.getKey());
      for (Map.Entry<Long, Entry> e : q.getValue().entrySet()) {
        int s = states.getOrDefault(e.getKey(), -1);
        if (e.getValue().expect() != Expect.SKIPPED
            && s != PoisonTables.ACKED
            && s != PoisonTables.DEAD) {
          return false;
        }
      }
    }
    return true;
  }

  /** Poison events neither acked nor dead (skipped bad rows excepted). */
  private long lost(List<String> problems) throws SQLException {
    long lost = 0;
    for (Map.Entry<String, Map<Long, Entry>> q : run.ledger.all().entrySet()) {
      Map<Long, Integer> states = tables.states(q.getKey());
      long here = 0;
      List<String> examples = new ArrayList<>();
      for (Map.Entry<Long, Entry> e : q.getValue().entrySet()) {
        int s = states.getOrDefault(e.getKey(), -1);
        if (e.getValue().expect() != Expect.SKIPPED
            && s != PoisonTables.ACKED
            && s != PoisonTables.DEAD) {
          here++;
          if (examples.size() < 3) {
            examples.add(e.getKey() + " (state " + s + ")");
          }
        }
      }
      if (here > 0) {
        problems.add(
            "lost: "
                + here
                + " event(s) of "
                + q.getKey()
                + " neither acked nor dead, e.g. "
                + String.join(", ", examples));
      }
      lost += here;
    }
    return lost;
  }

  /** Deliveries before the due time the manager sent, or before the time the demo last set. */
  private long early(List<String> problems) {
    long early = 0;
    for (Map.Entry<String, Map<Long, Entry>> q : run.ledger.all().entrySet()) {
      for (Map.Entry<Long, List<PoisonTally.Sighting>> e : run.tally.queue(q.getKey()).entrySet()) {
        Entry entry = q.getValue().get(e.getKey());
        long notBefore = entry == null ? 0 : entry.notBeforeNs();
        for (PoisonTally.Sighting s : e.getValue()) {
          long due = Math.max(s.dueNs(), notBefore);
          if (s.seenNs() < due) {
            early++;
            problems.add(
                String.format(
                    "early: %s/%d delivered %d ms before its time_next",
                    q.getKey(), e.getKey(), (due - s.seenNs()) / 1_000_000));
          }
        }
      }
    }
    return early;
  }

  /** Stops the faults, canaries and poison receivers; idempotent. Before the manager stops. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    injector.interrupt();
    canaries.close();
    receivers.close();
    FaultHook.reset();
    tables.close();
  }
}
