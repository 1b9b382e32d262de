package dev.sluice.core.fairness;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Each tenant's rate ({@code tenant_max_rate}, or its own {@code max_rate} in {@code
 * tenant_limits}): at most so many of its events fired a second on this shard, in bursts of at most
 * its {@code burst}. A tenant at its rate is passed over, like one at its in-flight cap, so its
 * events wait aside in the window while the other tenants' go; it takes its turn again when its
 * next event is on schedule.
 *
 * <p>One {@link RateLimit} per tenant that fired lately; one whose burst is whole again is dropped
 * (a new one behaves the same), so the map holds only tenants busy within about a burst's time. The
 * tenants passed over in the current fire round are the ones "being limited" for the status page
 * and metrics, and the dispatcher sleeps no longer than the first of them may go again.
 *
 * <p>Owned by the {@code Dispatcher} thread: no locks; {@link #limitedNow} is a copy for readers.
 * Times are monotonic nanoseconds.
 */
public final class TenantRates {
  private final TenantLimits limits;
  private final Map<String, RateLimit> byTenant = new HashMap<>();

  /** Tenants passed over for their rate in the current round (cleared at the round's start). */
  private final Set<String> passedOver = new LinkedHashSet<>();

  /** Those of the last round that passed anyone over: what readers see. */
  private volatile Set<String> limitedNow = Set.of();

  private volatile long waits;

  public TenantRates(TenantLimits limits) {
    this.limits = limits;
  }

  /** Whether any tenant has a rate at all (otherwise every call here is a no-op). */
  public boolean active() {
    return limits.hasRates();
  }

  /** A fire round starts at {@code nowNs}: what the last one passed over is published. */
  public void startRound(long nowNs) {
    if (!passedOver.isEmpty() || !limitedNow.isEmpty()) {
      limitedNow = Set.copyOf(passedOver);
    }
    passedOver.clear();
    if (byTenant.size() > 64) {
      byTenant.values().removeIf(r -> r.rested(nowNs));
    }
  }

  /** Whether {@code tenant} may fire one more event at {@code nowNs}; counts a refusal. */
  public boolean mayTake(String tenant, long nowNs) {
    RateLimit r = limit(tenant);
    if (r == null || r.available(nowNs) > 0) {
      return true;
    }
    if (passedOver.add(tenant)) {
      waits = waits + 1; // only this thread writes it
    }
    return false;
  }

  /** One of {@code tenant}'s events fired at {@code nowNs}. */
  public void took(String tenant, long nowNs) {
    RateLimit r = limit(tenant);
    if (r != null) {
      r.took(nowNs, 1);
    }
  }

  /** How long until the first tenant passed over this round may go again; MAX_VALUE if none. */
  public long waitNs(long nowNs) {
    long wait = Long.MAX_VALUE;
    for (String t : passedOver) {
      RateLimit r = byTenant.get(t);
      if (r != null) {
        wait = Math.min(wait, Math.max(1, r.waitNs(nowNs)));
      }
    }
    return wait;
  }

  /** The tenants the last round passed over for their rate (any thread). */
  public Set<String> limitedNow() {
    return limitedNow;
  }

  /** Times a tenant with a due event was passed over for its rate (once per round each). */
  public long waits() {
    return waits;
  }

  private RateLimit limit(String tenant) {
    RateLimit r = byTenant.get(tenant);
    if (r == null) {
      int rate = limits.maxRate(tenant);
      if (rate <= 0) {
        return null;
      }
      r = new RateLimit(rate, limits.burst(tenant));
      byTenant.put(tenant, r);
    }
    return r;
  }
}
