package dev.sluice.manager.queue;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * Receivers' credits as tenants hold them: each tenant's in-flight count and dispatch total, its
 * in-flight cap, and the reserve of credits kept for tenants with nothing in flight.
 *
 * <p>The reserve: the queue's {@code tenant_reserve} of all credits (rounded; at least one unless
 * it is 0%). Without it a busy tenant holds every credit and a quiet tenant's event waits for the
 * next ack, however fair the turns; with it, that event goes out at once. It stands only for {@link
 * #RESERVE_HOLD_NS} after a tenant with nothing in flight last took a credit while others held
 * some, so a tenant alone on a queue uses every credit.
 *
 * <p>Owned by the {@link Dispatcher} thread: no locks.
 */
final class TenantCredits {
  static final long RESERVE_HOLD_NS = TimeUnit.SECONDS.toNanos(10);

  private final TenantLimits limits;
  private final boolean fair;
  private final int reservePercent;

  /** Per tenant: [credits held, events dispatched]. */
  private final Map<String, long[]> counts = new HashMap<>();

  /** Credits held by all tenants. */
  private int held;

  /** When a tenant with nothing in flight last took a credit while others held some (mono ns). */
  private long lastLightArrivalMono = Long.MIN_VALUE / 2;

  TenantCredits(TenantLimits limits, boolean fair, int reservePercent) {
    this.limits = limits;
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
  boolean mayTake(String tenant, IntSupplier freeCredits, IntSupplier allCredits) {
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
    return System.nanoTime() - lastLightArrivalMono < RESERVE_HOLD_NS;
  }

  void take(String tenant) {
    long[] c = counts.computeIfAbsent(tenant, k -> new long[2]);
    if (c[0] == 0 && held > 0) {
      lastLightArrivalMono = System.nanoTime();
    }
    c[0]++;
    held++;
  }

  void giveBack(String tenant) {
    long[] c = counts.get(tenant);
    if (c != null) {
      c[0]--;
    }
    held--;
  }

  void dispatched(String tenant) {
    counts.computeIfAbsent(tenant, k -> new long[2])[1]++;
  }

  long held(String tenant) {
    long[] c = counts.get(tenant);
    return c == null ? 0 : c[0];
  }

  long dispatchedTotal(String tenant) {
    long[] c = counts.get(tenant);
    return c == null ? 0 : c[1];
  }

  /** Every tenant that ever held a credit. */
  java.util.Set<String> tenants() {
    return counts.keySet();
  }
}
