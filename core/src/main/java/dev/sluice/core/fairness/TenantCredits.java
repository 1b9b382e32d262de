package dev.sluice.core.fairness;

import dev.sluice.core.loop.Ticker;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * Receivers' credits as tenants hold them: each tenant's in-flight count, dispatch total and wait
 * (due → fired), its in-flight cap, and the reserve of credits kept for tenants with nothing in
 * flight.
 *
 * <p>The reserve: the queue's {@code tenant_reserve} of all credits (rounded; at least one unless
 * it is 0%). Without it a busy tenant holds every credit and a quiet tenant's event waits for the
 * next ack, however fair the turns; with it, that event goes out at once. It stands only for {@link
 * #RESERVE_HOLD_NS} after a tenant with nothing in flight last took a credit while others held
 * some, so a tenant alone on a queue uses every credit.
 *
 * <p>Accounts of idle tenants are dropped ({@link #IDLE_EVICT_NS} after their last dispatch, with
 * nothing in flight and nothing in the window), checked at most every {@link #SWEEP_EVERY_NS} as
 * events are dispatched: a queue that sees millions of tenants over time keeps only the recent
 * ones. A dropped tenant's totals start again from zero if it comes back.
 *
 * <p>Owned by the {@code Dispatcher} thread: no locks.
 */
public final class TenantCredits {
  static final long RESERVE_HOLD_NS = TimeUnit.SECONDS.toNanos(10);

  /**
   * A tenant's longest recent wait covers the events it had fired in the last one to two of these
   * (two buckets, so the figure neither forgets a wait at once nor keeps it for ever).
   */
  static final long RECENT_WAIT_NS = TimeUnit.SECONDS.toNanos(10);

  /** An account idle this long (and holding nothing) is dropped: its recent wait is 0 by then. */
  static final long IDLE_EVICT_NS = 3 * RECENT_WAIT_NS;

  static final long SWEEP_EVERY_NS = TimeUnit.SECONDS.toNanos(5);

  private final TenantLimits limits;

  /** Whether a tenant has events in the window (its account is kept while it does). */
  private final java.util.function.Predicate<String> inWindow;

  private long lastSweepMono;
  private boolean swept;
  private final boolean fair;
  private final int reservePercent;

  /** One tenant's figures. */
  private static final class Account {
    long held;
    long dispatched;
    long waitNsTotal;
    long maxWaitNs;
    long previousMaxWaitNs;
    long bucketStartMono;
    long lastActiveMono;
  }

  private final Map<String, Account> accounts = new HashMap<>();
  private final Ticker ticker;

  /** Credits held by all tenants. */
  private int held;

  /** When a tenant with nothing in flight last took a credit while others held some (mono ns). */
  private long lastLightArrivalMono = Long.MIN_VALUE / 2;

  public TenantCredits(TenantLimits limits, boolean fair, int reservePercent) {
    this(limits, fair, reservePercent, t -> false, Ticker.SYSTEM);
  }

  public TenantCredits(
      TenantLimits limits,
      boolean fair,
      int reservePercent,
      java.util.function.Predicate<String> inWindow,
      Ticker ticker) {
    this.limits = limits;
    this.ticker = ticker;
    this.inWindow = inWindow;
    this.fair = fair;
    this.reservePercent = reservePercent;
  }

  /**
   * Whether {@code tenant} may take one more credit: under its in-flight cap, and — if it already
   * holds one — not out of the reserve.
   *
   * @param freeCredits the receivers' free credits now (asked only when needed)
   * @param allCredits all of the receivers' credits (asked only when needed)
   */
  public boolean mayTake(String tenant, IntSupplier freeCredits, IntSupplier allCredits) {
    long mine = held(tenant);
    int cap = limits.maxInFlight(tenant);
    if (cap > 0 && mine >= cap) {
      return false;
    }
    return mine == 0
        || !fair
        || !reserveStands()
        || freeCredits.getAsInt() > reserve(allCredits.getAsInt());
  }

  /** The credits kept back out of {@code allCredits}. */
  int reserve(int allCredits) {
    if (reservePercent == 0 || allCredits < 2) {
      return 0;
    }
    return Math.max(1, (allCredits * reservePercent + 50) / 100);
  }

  private boolean reserveStands() {
    return ticker.nanos() - lastLightArrivalMono < RESERVE_HOLD_NS;
  }

  private Account account(String tenant) {
    return accounts.computeIfAbsent(tenant, k -> new Account());
  }

  public void take(String tenant) {
    Account a = account(tenant);
    if (a.held == 0 && held > 0) {
      lastLightArrivalMono = ticker.nanos();
    }
    a.held++;
    held++;
  }

  public void giveBack(String tenant) {
    Account a = accounts.get(tenant);
    if (a != null) {
      a.held--;
    }
    held--;
  }

  /**
   * One of {@code tenant}'s events was fired and sent, {@code waitNs} after it came due.
   *
   * @param mono when (monotonic ns)
   */
  public void dispatched(String tenant, long waitNs, long mono) {
    Account a = account(tenant);
    a.dispatched++;
    a.waitNsTotal += waitNs;
    roll(a, mono);
    a.maxWaitNs = Math.max(a.maxWaitNs, waitNs);
    a.lastActiveMono = mono;
    if (!swept || mono - lastSweepMono >= SWEEP_EVERY_NS) {
      swept = true;
      lastSweepMono = mono;
      evictIdle(mono);
    }
  }

  /** Drops the accounts of tenants idle for {@link #IDLE_EVICT_NS} with nothing held. */
  void evictIdle(long mono) {
    accounts
        .entrySet()
        .removeIf(
            e ->
                e.getValue().held == 0
                    && mono - e.getValue().lastActiveMono >= IDLE_EVICT_NS
                    && !inWindow.test(e.getKey()));
  }

  /** Starts a new recent-wait bucket when the current one is over. */
  private static void roll(Account a, long mono) {
    long age = mono - a.bucketStartMono; // the first bucket of an account starts anew here
    if (age >= 0 && age < RECENT_WAIT_NS) {
      return;
    }
    boolean next = age >= 0 && age < 2 * RECENT_WAIT_NS;
    a.previousMaxWaitNs = next ? a.maxWaitNs : 0;
    a.maxWaitNs = 0;
    a.bucketStartMono = next ? a.bucketStartMono + RECENT_WAIT_NS : mono;
  }

  public long held(String tenant) {
    Account a = accounts.get(tenant);
    return a == null ? 0 : a.held;
  }

  public long dispatchedTotal(String tenant) {
    Account a = accounts.get(tenant);
    return a == null ? 0 : a.dispatched;
  }

  /** The time {@code tenant}'s fired events waited after they came due, added up (ns). */
  public long waitNsTotal(String tenant) {
    Account a = accounts.get(tenant);
    return a == null ? 0 : a.waitNsTotal;
  }

  /**
   * The longest wait among {@code tenant}'s events fired in the last {@link #RECENT_WAIT_NS} to
   * twice that (ns); 0 when none was.
   */
  public long recentMaxWaitNs(String tenant, long mono) {
    Account a = accounts.get(tenant);
    if (a == null) {
      return 0;
    }
    roll(a, mono);
    return Math.max(a.maxWaitNs, a.previousMaxWaitNs);
  }

  /** Every tenant that held a credit lately (see {@link #evictIdle}). */
  public java.util.Set<String> tenants() {
    return accounts.keySet();
  }
}
