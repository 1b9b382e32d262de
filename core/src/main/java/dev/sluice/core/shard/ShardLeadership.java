package dev.sluice.core.shard;

import dev.sluice.core.EngineConfig;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.store.FencedOffException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lease and health of one shard: starts the {@link LeaseKeeper} ({@code sluice-<shard>-lease}) and
 * does what it tells — lead, halt, step down — and what health must show (a worker fault, a
 * read-only primary, a manager id used twice, a write refused by the fence).
 *
 * <p>Threads: {@link #lead} and {@link #stopLeading} run on the lease thread (or, when that thread
 * died, on it from its uncaught-exception handler). {@link #halt}, {@link #fencedOff} and the
 * worker-fault listener run on any thread and take no lock and make no database call: they close
 * the term's gate, tell health, and tell the lease keeper, which acts on its own thread. A
 * step-down takes the queues out under the shard's lock, then stops them all at once outside it
 * ({@link QueueStops#abandon}).
 *
 * <p>A term's workers beside its queues (recurring events, event groups, the binlog follower) are
 * the shard's {@link TermWorkers}: {@link #lead} begins them with the term (through {@link
 * ServedQueues#lead}, under the shard's lock); {@link #halt} and {@link #fencedOff} stop its
 * writers (told, never waited for); the step-down stops them all; {@link #fault} asks whether one
 * died; the graceful stop waits for them ({@link #awaitTermWorkers}) before the lease is given up.
 */
public final class ShardLeadership implements LeaseKeeper.Leadership {
  private static final Logger log = LoggerFactory.getLogger(ShardLeadership.class);

  private final ShardConfig config;
  private final EngineConfig manager;
  private final LeaseBalancer balancer;
  private final String instance;
  private final ShardPool pool;
  private final ShardHealth health;
  private final ShardDiscovery discovery;
  private final ServedQueues served;
  private final TermWorkers workers;

  private volatile LeaseKeeper keeper;
  private Thread keeperThread;

  ShardLeadership(
      ShardConfig config,
      EngineConfig manager,
      LeaseBalancer balancer,
      String instance,
      ShardPool pool,
      ShardHealth health,
      ShardDiscovery discovery,
      ServedQueues served,
      TermWorkers workers) {
    this.config = config;
    this.workers = workers;
    this.manager = manager;
    this.balancer = balancer;
    this.instance = instance;
    this.pool = pool;
    this.health = health;
    this.discovery = discovery;
    this.served = served;
  }

  /** Starts the lease keeper's thread once; under the shard's lock (it starts, never waits). */
  void seekLease() {
    synchronized (served) {
      if (served.stopped() || keeper != null) {
        return;
      }
      keeper =
          new LeaseKeeper(
              config.name(),
              manager.managerId(),
              instance,
              pool.stores().leases(),
              balancer,
              this,
              manager.leaseTtl().toNanos(),
              manager.leaseRenew().toNanos(),
              pool.ticker(),
              pool.faults());
      keeperThread = new Thread(keeper, "sluice-" + config.name() + "-lease");
      keeperThread.setDaemon(true);
      keeperThread.setUncaughtExceptionHandler(
          (t, e) -> {
            // Nothing renews the lease any more: stop serving now rather than when it lapses.
            log.error("shard {}: lease keeper thread died: {}", config.name(), e.toString(), e);
            String why = "lease keeper died: " + e;
            health.workerDied(why);
            halt(why);
            stopLeading(why);
          });
      keeperThread.start();
    }
    log.info("shard {}: seeking its lease", config.name());
  }

  /**
   * The shard's graceful stop, first step: the keeper's thread ends (5 s at most). Called once
   * {@link ServedQueues#markStopped} is set, so no keeper starts after this.
   */
  void stopKeeper() {
    LeaseKeeper k = keeper;
    if (k != null) {
      k.stop();
      try {
        keeperThread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Before a graceful stop: this manager withdraws its heartbeat but keeps serving, so that the
   * others get ready to take the shard (see {@link LeaseKeeper#leave}).
   *
   * @return whether another live manager may take the shard over (worth a short wait)
   */
  boolean announceLeaving() {
    LeaseKeeper k = keeper;
    return k != null && k.leave();
  }

  /** The shard's graceful stop: the lease is given up, so another manager takes over at once. */
  void resign() {
    LeaseKeeper k = keeper;
    if (k != null) {
      k.resign();
    }
  }

  @Override
  public void lead(long token) {
    synchronized (served) {
      if (served.stopped()) {
        return;
      }
      served.lead(LeaderTerm.of(config.name(), token, this::fencedOff), discovery.tables());
    }
    health.servedAgain(null);
  }

  /**
   * The graceful stop, once the shard is marked stopped (which told the term's workers to stop):
   * its writers are waited for (2 s at most), with no lock held.
   */
  void awaitTermWorkers() {
    workers.awaitStopped();
  }

  /** No lock, no database call: every queue of the shard stops firing now. */
  @Override
  public void halt(String why) {
    served.term().close();
    workers.halt();
  }

  /**
   * Not leading any more: the term's gate is closed, its workers told to stop and its queues taken
   * out under the shard's lock, then, with no lock held, the queues all stop at once (each handed
   * an unfenced store for what it still writes).
   */
  @Override
  public void stopLeading(String why) {
    List<QueueManager> taken = served.stepDown();
    QueueStops.abandon(
        taken, q -> pool.unfenced(q.table()), "shard " + config.name() + ": " + why, pool.ticker());
  }

  /**
   * The lease keeper found the lease held by another live manager: the shard is served, so a fault
   * that made this process give it up (a dead worker, a fenced-off write) no longer makes this
   * process unready; it is a standby like any other. No lock, no database call.
   */
  @Override
  public void servedElsewhere(String owner) {
    if (!served.leading()) {
      health.servedAgain(owner);
    }
  }

  /**
   * The lease keeper's check each round: a served queue whose worker thread is gone, or a thread of
   * this term's workers (recurring events, event groups).
   */
  @Override
  public String fault() {
    String queues = served.workerFault();
    if (queues != null) {
      return queues;
    }
    return served.leading() ? workers.fault() : null;
  }

  /** The lease keeper read the primary's read-only flag: shown in health while it is set. */
  @Override
  public void readOnly(boolean readOnly) {
    health.readOnly(readOnly);
  }

  /** Another live process uses this manager id: refused to lead; shown in health. */
  @Override
  public void conflict(String why) {
    health.conflict(why);
  }

  /** A queue's worker fault: an Error survived, or a thread that died. Any thread, no lock. */
  final LoopFaults.Listener faults =
      new LoopFaults.Listener() {
        @Override
        public void errorCaught(String queue, String loop, Throwable t) {
          pool.evictConnections();
        }

        @Override
        public void workerDied(String queue, String thread, Throwable t) {
          String why = "worker " + thread + " of queue " + queue + " died: " + t;
          health.workerDied(why);
          LeaseKeeper k = keeper;
          if (k != null) {
            k.giveUp(why);
          }
        }
      };

  /**
   * A write of this term refused by the lease fence: another manager took the shard's lease. No
   * lock, no database call (any worker thread): no queue of the shard fires from now on, health
   * says why, and the lease keeper stops the queues on its own thread at once. A refusal reported
   * by a store of an earlier term is ignored.
   */
  void fencedOff(FencedOffException e) {
    LeaderTerm term = served.term();
    if (served.stopped() || !served.leading() || !term.refused(e)) {
      return;
    }
    term.close();
    workers.halt();
    String why = e.getMessage();
    health.fencedOff(why);
    LeaseKeeper k = keeper;
    if (k != null) {
      k.fencedOff(why);
    }
  }
}
