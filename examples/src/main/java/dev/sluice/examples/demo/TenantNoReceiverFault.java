package dev.sluice.examples.demo;

import dev.sluice.core.fairness.ShuffleSharder;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletCredits;
import dev.sluice.db.KeyRange;
import dev.sluice.db.store.EventRef;
import dev.sluice.examples.demo.PoisonLedger.Expect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fault 10, a tenant whose shuffle shard only refusing receivers would win: the queue has {@code
 * max_receivers_per_tenant=1}; besides its usual receiver (which takes every tenant), two
 * in-process receivers join that take only tenant {@value #SHARED}, with ids chosen so that each
 * outranks the usual receiver for tenant {@value #TENANT} (as a receiver limited to other tenants
 * could choose its id on purpose). Sharded by id alone, {@value #TENANT}'s one receiver would be a
 * refusing one and its events would never go. Contained: every event of {@value #TENANT}, of
 * {@value #SHARED} and of the default tenant is acked within {@link #DELIVER}, and the queue's
 * canaries do not stall.
 *
 * <p>Threads: the refusing receivers are {@link Outlet}s attached to the demo's engine; their
 * {@link Outlet#deliver} is called on the queue's dispatcher thread and hands each batch to one
 * thread of this fault's, which records and acks it.
 */
final class TenantNoReceiverFault implements Fault {
  private static final String QUEUE = "poison_tenant_shard";
  private static final String TENANT = "globex";
  private static final String SHARED = "acme";
  private static final int EACH = 5;
  static final Duration DELIVER = Duration.ofSeconds(15);

  /** Stream ids of the demo's own outlets, apart from the manager's gRPC and channel ones. */
  private static final AtomicLong STREAM_IDS = new AtomicLong(1L << 50);

  private final List<Long> refused = new ArrayList<>();
  private final List<Long> others = new ArrayList<>();
  private final List<RefusingReceiver> refusing = new ArrayList<>();
  private boolean delivered;
  private long deliverMs;
  private String lateTenant = "";
  private String lateOthers = "";

  @Override
  public String name() {
    return "a tenant only refusing receivers would be sharded onto";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public String comment() {
    return PoisonTables.COMMENT + " max_receivers_per_tenant=1";
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    String accepting = PoisonReceivers.idFor(QUEUE);
    List<String> ids = outranking(accepting, 2);
    run.note(
        "fault 13: "
            + QUEUE
            + ": receivers "
            + ids
            + " that take only tenant "
            + SHARED
            + " join "
            + accepting
            + "; by id alone tenant "
            + TENANT
            + "'s one receiver would be one of them");
    ExecutorService acker =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "demo-poison-refusing"));
    try {
      for (String id : ids) {
        RefusingReceiver r = new RefusingReceiver(id, run, acker);
        refusing.add(r);
        run.manager.engine().subscribe(r, QUEUE, KeyRange.ALL);
      }
      long t0 = System.nanoTime();
      for (int i = 0; i < EACH; i++) {
        refused.add(add(run, TENANT));
        others.add(add(run, SHARED));
        others.add(add(run, ""));
      }
      delivered =
          PoisonRun.awaitDb(
              DELIVER, () -> run.allAcked(QUEUE, refused) && run.allAcked(QUEUE, others));
      deliverMs = (System.nanoTime() - t0) / 1_000_000;
      lateTenant = run.notAcked(QUEUE, refused);
      lateOthers = run.notAcked(QUEUE, others);
    } finally {
      for (RefusingReceiver r : refusing) {
        run.manager.engine().unsubscribe(r, "poison fault over");
      }
      acker.shutdown();
      acker.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static long add(PoisonRun run, String tenant) throws Exception {
    long id = run.tables.insert(QUEUE, "tenant-" + (tenant.isEmpty() ? "default" : tenant), tenant);
    run.ledger.added(QUEUE, id, Expect.DELIVERED, 0);
    return id;
  }

  /**
   * {@code n} receiver ids each of which alone would win {@value #TENANT}'s one place over {@code
   * accepting}, when receivers are ranked by id alone.
   */
  static List<String> outranking(String accepting, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; ids.size() < n; i++) {
      String id = "only-" + SHARED + "-" + i;
      ShuffleSharder s = new ShuffleSharder(1);
      s.setReceivers(List.of(accepting, id));
      if (s.receiversFor(TENANT).equals(Set.of(id))) {
        ids.add(id);
      }
    }
    return ids;
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    if (refusing.isEmpty()) {
      return Verdict.of(false, "not injected: no refusing receiver joined " + QUEUE);
    }
    long wrong = refusing.stream().mapToLong(r -> r.wrongTenant.get()).sum();
    int took = refusing.stream().mapToInt(r -> r.took.get()).sum();
    if (wrong > 0) {
      return Verdict.of(false, wrong + " event(s) went to a receiver that refuses their tenant");
    }
    if (!delivered) {
      return Verdict.of(
          false,
          "while the refusing receivers were there, not acked within "
              + DELIVER.toSeconds()
              + " s: "
              + TENANT
              + ": ["
              + lateTenant
              + "], other tenants: ["
              + lateOthers
              + "]");
    }
    return Verdict.of(
        true,
        "the "
            + EACH
            + " "
            + TENANT
            + " events and the "
            + others.size()
            + " of other tenants acked within "
            + deliverMs
            + " ms; the refusing receivers took "
            + took
            + " "
            + SHARED
            + " event(s) and none of "
            + TENANT);
  }

  /**
   * An in-process receiver that takes only tenant {@value #SHARED}: records each event to the tally
   * and acks it at once on the fault's thread. Credits are an atomic count (dispatcher threads take
   * them, the core gives them back when the events settle).
   */
  private static final class RefusingReceiver implements Outlet {
    private static final int MAX = 16;
    private final String id;
    private final long streamId = STREAM_IDS.incrementAndGet();
    private final PoisonRun run;
    private final ExecutorService acker;
    private final OutletCredits credits = new OutletCredits(MAX);
    final AtomicInteger took = new AtomicInteger();
    final AtomicInteger wrongTenant = new AtomicInteger();

    RefusingReceiver(String id, PoisonRun run, ExecutorService acker) {
      this.id = id;
      this.run = run;
      this.acker = acker;
    }

    @Override
    public String id() {
      return id;
    }

    @Override
    public long streamId() {
      return streamId;
    }

    @Override
    public int maxInFlight() {
      return credits.max();
    }

    @Override
    public int free() {
      return credits.free();
    }

    @Override
    public boolean tryReserve(String workClass) {
      return credits.tryTake();
    }

    @Override
    public void unreserve(String workClass) {
      credits.giveBack();
    }

    @Override
    public boolean acceptsTenant(String tenant) {
      return tenant.equals(SHARED);
    }

    @Override
    public void deliver(String shard, List<Delivery> batch) {
      try {
        acker.execute(() -> handle(shard, batch));
      } catch (RejectedExecutionException e) {
        // Fired while it was being detached, after the fault's thread stopped: give them back.
        List<EventRef> refs = batch.stream().map(d -> new EventRef(d.id(), d.epoch())).toList();
        run.manager.engine().outcomes(QUEUE, shard).released(this, refs, "receiver left");
      }
    }

    private void handle(String shard, List<Delivery> batch) {
      List<EventRef> refs = new ArrayList<>();
      for (Delivery d : batch) {
        if (!acceptsTenant(d.tenant())) {
          wrongTenant.incrementAndGet();
        }
        Object label = d.columns().get("label");
        run.tally.seen(QUEUE, d.id(), String.valueOf(label), run.wallNs(), d.dueNs());
        took.incrementAndGet();
        refs.add(new EventRef(d.id(), d.epoch()));
      }
      run.manager.engine().outcomes(QUEUE, shard).acked(this, refs);
    }

    @Override
    public String toString() {
      return "receiver " + id + " (in-process, tenant " + SHARED + " only)";
    }
  }
}
