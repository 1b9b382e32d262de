package dev.sluice.core.shard;

import dev.sluice.core.loop.LoopFaults;
import dev.sluice.core.loop.LoopRunner;
import dev.sluice.core.loop.Ticker;
import dev.sluice.db.store.LeaseStore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds (or seeks) one shard's lease, on its own thread ({@code sluice-<shard>-lease}). Every
 * {@code renew} it announces this manager, checks that the primary is writable, and renews the
 * lease it holds or takes a free one if this process is under its fair share. It tells the shard to
 * lead or to stop at once when: the lease is taken or expires, the shard turns read-only (a demoted
 * primary), renewal fails for so long that the lease may have expired, or another manager joined
 * and this process holds more than its share.
 *
 * <p>Timing: a lease lasts {@code ttl} on the database's clock; a leader that cannot renew stops
 * dispatching one renew period before that, by its own monotonic clock, so two managers never
 * dispatch the same shard by lease (and the epoch CAS covers the rest).
 *
 * <p><b>A planned hand-over.</b> A manager that joins (or restarts) is under its share while the
 * others still hold every lease; each of them gives one up at its next round after it counted the
 * newcomer (it stops firing, stops its queues, then releases the lease). So that the shard does not
 * wait for the newcomer's next renew period as well, a keeper under its share whose lease another
 * live manager holds tries again every {@link #SEEK_FAST_NS} for {@link #SEEK_FAST_TTLS} TTLs: the
 * shard's deliveries pause for the old leader's stop and one short wait, not a renew period.
 */
public final class LeaseKeeper implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  /** What the keeper tells its shard. */
  interface Leadership {
    void lead(long token);

    void stopLeading(String why);

    /**
     * Stops every fire of the shard at once (closes its {@link dev.sluice.core.loop.ShardGate}),
     * before {@link #stopLeading}: takes no lock, makes no database call.
     */
    default void halt(String why) {}

    /**
     * Another live process uses this manager id ({@code why}), so this one refuses to lead; null
     * once the id is this process's again.
     */
    default void conflict(String why) {}

    /** Why the shard cannot be served as it is (a worker thread died), or null when it can. */
    default String fault() {
      return null;
    }

    /**
     * Another live manager holds the shard's lease ({@code owner}): the shard is served, by it. A
     * fault that made this process give the shard up (or a fenced-off write) is over for health:
     * this process is a healthy standby now.
     */
    default void servedElsewhere(String owner) {}

    /**
     * Whether the shard's primary refuses writes (a demoted primary, {@code read_only}): then no
     * manager can serve the shard, and health must say so; false once it is writable again.
     */
    default void readOnly(boolean readOnly) {}
  }

  /** After giving a shard up for a fault, how long (in TTLs) before seeking it again. */
  static final int HOLD_OFF_TTLS = 2;

  /** The pace of a keeper under its share whose lease another manager is expected to give up. */
  static final long SEEK_FAST_NS = TimeUnit.MILLISECONDS.toNanos(50);

  /**
   * For how long (in TTLs) the fast pace lasts: the holder gives the lease up within one heartbeat
   * and one renew period of counting this manager, both shorter than a TTL.
   */
  static final int SEEK_FAST_TTLS = 2;

  private final String shard;
  private final String managerId;
  private final String instance;
  private final LeaseStore store;
  private final LeaseBalancer balancer;
  private final Leadership leadership;
  private final long ttlNs;
  private final long renewNs;
  private final Ticker ticker;

  /** Counts and logs a failed round; no backoff: the lease is tried every renew period. */
  private final LoopRunner runner;

  private volatile boolean running = true;
  private volatile boolean leader;

  /** The primary's read-only flag as last read; this thread only. */
  private boolean readOnly;

  private long lastRenewedMono;
  private long lastHeartbeatMono = Long.MIN_VALUE / 2;
  private final Object sleeper = new Object();

  /** Set under {@link #sleeper} by {@link #wake}: the next round runs without a pause. */
  private boolean wakeNow;

  private final Runnable waker = this::wake;

  /** A fault reported by the shard (any thread); the keeper's next round gives the lease up. */
  private volatile String giveUp;

  /**
   * A write of this leader was refused by the lease fence (any thread): another manager holds the
   * lease; the keeper's next round (at once) stops leading without releasing it.
   */
  private volatile String fencedOff;

  /** Not before this (monotonic ns) does the keeper seek the lease again after a fault. */
  private long holdOffUntilMono = Long.MIN_VALUE / 2;

  /** Another live process announces this manager id: do not lead (keeper thread only). */
  private boolean duplicate;

  /**
   * Since when (monotonic ns) this keeper, under its share, has found the lease held by another
   * manager; reset when the count of live managers changes or the lease is taken. Keeper thread.
   */
  private long refusedSinceMono = Long.MIN_VALUE / 2;

  /** Whether the next round comes after {@link #SEEK_FAST_NS} instead of a renew period. */
  private volatile boolean seekFast;

  /** The count of live managers at the last heartbeat (written by the keeper's thread). */
  private volatile int lastManagers;

  /**
   * Set by {@link #leave} (any thread): this process is stopping gracefully. The keeper withdraws
   * its heartbeat at once and keeps renewing what it holds, but sends no heartbeat and seeks no
   * lease any more, so the other managers count one fewer and get ready to take this one's shards.
   */
  private volatile boolean leaving;

  /** Whether the heartbeat was withdrawn after {@link #leave} (keeper thread). */
  private boolean withdrawn;

  LeaseKeeper(
      String shard,
      String managerId,
      String instance,
      LeaseStore store,
      LeaseBalancer balancer,
      Leadership leadership,
      long ttlNs,
      long renewNs,
      Ticker ticker,
      LoopFaults faults) {
    this.shard = shard;
    this.managerId = managerId;
    this.instance = instance;
    this.store = store;
    this.balancer = balancer;
    this.leadership = leadership;
    this.ttlNs = ttlNs;
    this.renewNs = renewNs;
    this.ticker = ticker;
    this.runner = new LoopRunner(faults, "lease");
  }

  boolean leader() {
    return leader;
  }

  /**
   * A graceful stop's first step (any thread): the heartbeat is withdrawn at the keeper's next
   * round (at once), so the other live managers count one fewer at their next heartbeat, find their
   * share grown, and seek this shard fast; the lease is kept (and renewed) until {@link #resign}.
   *
   * @return whether another live manager may take the shard over: this keeper leads it, and the
   *     last heartbeat counted others
   */
  boolean leave() {
    leaving = true;
    wake();
    return leader && lastManagers > 1;
  }

  /** How long the keeper waits before its next round (a renew period, or the fast seek's pace). */
  long pauseNs() {
    return seekFast ? Math.min(renewNs, SEEK_FAST_NS) : renewNs;
  }

  /**
   * The shard cannot be served (a worker died): stop leading, release the lease so that another
   * manager takes it at once, and seek it again only after {@link #HOLD_OFF_TTLS} TTLs. Any thread;
   * the keeper acts at once, on its own thread.
   */
  void giveUp(String why) {
    giveUp = why;
    synchronized (sleeper) {
      sleeper.notifyAll();
    }
  }

  /**
   * The shard's lease fence refused a write: another manager took the lease. Any thread; the keeper
   * stops leading at once, on its own thread (the lease is not ours to release).
   */
  void fencedOff(String why) {
    fencedOff = why;
    synchronized (sleeper) {
      sleeper.notifyAll();
    }
  }

  void stop() {
    running = false;
    synchronized (sleeper) {
      sleeper.notifyAll();
    }
  }

  /** Any thread: the next round runs now (the share of leases grew). */
  private void wake() {
    synchronized (sleeper) {
      wakeNow = true;
      sleeper.notifyAll();
    }
  }

  @Override
  public void run() {
    balancer.onShareGrown(waker);
    try {
      loop();
    } finally {
      balancer.forget(waker);
    }
  }

  private void loop() {
    while (running) {
      long t0 = ticker.nanos();
      tick();
      long left = pauseNs() - (ticker.nanos() - t0);
      synchronized (sleeper) {
        if (running && left > 0 && giveUp == null && fencedOff == null && !wakeNow) {
          try {
            TimeUnit.NANOSECONDS.timedWait(sleeper, left);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        wakeNow = false;
      }
    }
  }

  /** One round; visible for tests. */
  void tick() {
    try {
      String fenced = fencedOff;
      fencedOff = null;
      if (fenced != null && leader) {
        lose(fenced);
        return;
      }
      String fault = giveUp != null ? giveUp : leader ? leadership.fault() : null;
      giveUp = null;
      if (leader && fault != null) {
        leader = false;
        balancer.released();
        holdOffUntilMono = ticker.nanos() + HOLD_OFF_TTLS * ttlNs;
        log.error("shard {}: giving the lease up: {}", shard, fault);
        leadership.halt(fault);
        leadership.stopLeading(fault);
        store.release(shard, managerId);
        return;
      }
      boolean ro = store.readOnly();
      if (ro != readOnly) {
        readOnly = ro;
        leadership.readOnly(ro);
      }
      if (ro) {
        lose("the primary is read-only (demoted?)");
        return;
      }
      long mono = ticker.nanos();
      if (leaving) {
        if (!withdrawn) {
          store.leave(managerId, instance);
          withdrawn = true;
        }
        if (leader && !store.renew(shard, managerId, ttlNs)) {
          lose("the lease expired and another manager took it");
        } else if (leader) {
          lastRenewedMono = mono;
        }
        return;
      }
      if (mono - lastHeartbeatMono >= ttlNs / 3) {
        // Often enough to count as live within a TTL; not every round (idle queries add up).
        LeaseStore.Heartbeat hb = store.heartbeat(managerId, instance, ttlNs);
        balancer.managers(hb.managers());
        if (hb.managers() != lastManagers) {
          lastManagers = hb.managers();
          refusedSinceMono = Long.MIN_VALUE / 2; // a new balance: seek fast again if refused
        }
        lastHeartbeatMono = mono;
        if (!hb.ours() != duplicate) {
          duplicate = !hb.ours();
          if (duplicate) {
            String why =
                "manager_id '"
                    + managerId
                    + "' is used by another live process (instance "
                    + hb.holder()
                    + "; this one is "
                    + instance
                    + "): this one refuses to lead; give each process its own id";
            log.error("shard {}: {}", shard, why);
            leadership.conflict(why);
          } else {
            log.info("shard {}: manager_id '{}' is this process's again", shard, managerId);
            leadership.conflict(null);
          }
        }
      }
      if (duplicate) {
        lose("another live process uses manager_id '" + managerId + "'");
        return;
      }
      if (leader) {
        if (balancer.shouldGiveUp()) {
          leader = false;
          leadership.halt("rebalancing");
          leadership.stopLeading("rebalancing: another manager joined");
          store.release(shard, managerId);
          log.info("shard {}: lease given up to rebalance (quota {})", shard, balancer.quota());
          return;
        }
        long before = ticker.nanos();
        if (!store.renew(shard, managerId, ttlNs)) {
          lose("the lease expired and another manager took it");
        } else {
          lastRenewedMono = before;
        }
      } else if (ticker.nanos() - holdOffUntilMono >= 0 && balancer.reserve()) {
        long before = ticker.nanos();
        LeaseStore.Lease l = store.acquire(shard, managerId, ttlNs);
        if (l.held()) {
          leader = true;
          seekFast = false;
          refusedSinceMono = Long.MIN_VALUE / 2;
          lastRenewedMono = before;
          log.info("shard {}: lease taken (token {}), dispatching", shard, l.token());
          leadership.lead(l.token());
        } else {
          balancer.released();
          if (!l.owner().isEmpty() && !l.owner().equals(managerId)) {
            leadership.servedElsewhere(l.owner());
            refused(before);
          }
        }
      } else {
        seekFast = false;
      }
    } catch (Throwable t) { // an Error too: this thread must go on, or the lease is held by no one
      runner.failed(t);
    }
    if (leader && ticker.nanos() - lastRenewedMono > ttlNs - renewNs) {
      lose("could not renew the lease in time");
    }
  }

  /**
   * Under its share, this keeper found the lease held by another manager: that manager is expected
   * to give one up shortly (a planned hand-over), so seek fast for a while.
   */
  private void refused(long mono) {
    if (refusedSinceMono == Long.MIN_VALUE / 2) {
      refusedSinceMono = mono;
    }
    seekFast = mono - refusedSinceMono < SEEK_FAST_TTLS * ttlNs;
  }

  private void lose(String why) {
    if (leader) {
      leader = false;
      balancer.released();
      leadership.halt(why);
      log.warn("shard {}: leadership lost: {}", shard, why);
      leadership.stopLeading(why);
    }
  }

  /**
   * Graceful exit, after the keeper's thread ended and the shard stopped dispatching: free the
   * lease and withdraw this manager's heartbeat, so that another manager takes over at its next
   * round instead of after the TTL — its share of leases grows at once, not when this manager's
   * last heartbeat ages out.
   */
  void resign() {
    if (leader) {
      leader = false;
      balancer.released();
      try {
        store.release(shard, managerId);
      } catch (RuntimeException e) {
        log.warn(
            "shard {}: could not release the lease ({}); it expires by itself",
            shard,
            e.toString());
      }
    }
    try {
      store.leave(managerId, instance);
    } catch (RuntimeException e) {
      log.debug("shard {}: could not withdraw the heartbeat: {}", shard, e.toString());
    }
  }
}
