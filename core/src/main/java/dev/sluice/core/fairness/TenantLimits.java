package dev.sluice.core.fairness;

import dev.sluice.core.config.TenantLimit;
import dev.sluice.db.QueueOptions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What each tenant of one queue may hold: its share of the window and its in-flight cap. The
 * queue's comment ({@code tenant_cache_share}, {@code tenant_max_in_flight}) sets them for every
 * tenant; the manager's {@code tenant_limits} override them for named tenants — an override for
 * this queue wins over one for every queue ("*"), field by field.
 *
 * <p>Immutable: read from any thread.
 */
public final class TenantLimits {
  private final int cacheSize;
  private final int defaultCacheCap;
  private final int defaultMaxInFlight;
  private final int defaultMaxRate;
  private final int defaultBurst;

  /** Overridden shares of the window, in percent, by tenant. */
  private final Map<String, Integer> cacheShares = new TreeMap<>();

  private final Map<String, Integer> maxInFlights = new TreeMap<>();
  private final Map<String, Integer> maxRates = new TreeMap<>();
  private final Map<String, Integer> bursts = new TreeMap<>();

  private TenantLimits(QueueOptions o) {
    this.cacheSize = o.cacheSize();
    this.defaultCacheCap = o.tenantCacheCap();
    this.defaultMaxInFlight = o.tenantMaxInFlight();
    this.defaultMaxRate = o.tenantMaxRate();
    this.defaultBurst = o.tenantBurst();
  }

  /** The queue's own limits, for every tenant alike. */
  public static TenantLimits of(QueueOptions o) {
    return of(o, "", List.of());
  }

  /** The queue's limits with the overrides among {@code overrides} that concern {@code queue}. */
  public static TenantLimits of(QueueOptions o, String queue, List<TenantLimit> overrides) {
    TenantLimits l = new TenantLimits(o);
    // Every-queue overrides first, so that this queue's own overrides replace them.
    for (boolean specific : new boolean[] {false, true}) {
      for (TenantLimit t : overrides) {
        boolean forThisQueue = t.queue().equals(queue);
        if (!t.appliesTo(queue) || forThisQueue != specific) {
          continue;
        }
        if (t.cacheShare() != null) {
          l.cacheShares.put(t.tenant(), t.cacheShare());
        }
        if (t.maxInFlight() != null) {
          l.maxInFlights.put(t.tenant(), t.maxInFlight());
        }
        if (t.maxRate() != null) {
          l.maxRates.put(t.tenant(), t.maxRate());
        }
        if (t.burst() != null) {
          l.bursts.put(t.tenant(), t.burst());
        }
      }
    }
    return l;
  }

  /** The window slots {@code tenant} may hold (at least one). */
  public int cacheCap(String tenant) {
    Integer share = cacheShares.get(tenant);
    return share == null ? defaultCacheCap : Math.max(1, (int) ((long) cacheSize * share / 100));
  }

  /** The events {@code tenant} may have in flight; 0 means no cap. */
  public int maxInFlight(String tenant) {
    return maxInFlights.getOrDefault(tenant, defaultMaxInFlight);
  }

  /** The events {@code tenant} may have fired a second (per shard); 0 means no limit. */
  public int maxRate(String tenant) {
    return maxRates.getOrDefault(tenant, defaultMaxRate);
  }

  /** With a rate: how many of {@code tenant}'s events may go at once (at least 1). */
  public int burst(String tenant) {
    int b = bursts.getOrDefault(tenant, defaultBurst);
    return b > 0 ? b : Math.max(1, maxRate(tenant) / 10);
  }

  /** Whether any tenant may be held to a rate. */
  public boolean hasRates() {
    return defaultMaxRate > 0 || maxRates.values().stream().anyMatch(r -> r > 0);
  }

  /** Whether any tenant has its own limits. */
  public boolean hasOverrides() {
    return !cacheShares.isEmpty()
        || !maxInFlights.isEmpty()
        || !maxRates.isEmpty()
        || !bursts.isEmpty();
  }

  /** The overrides as text, for logs: {@code acme: cache_share=60% max_in_flight=200; ...}. */
  @Override
  public String toString() {
    Set<String> tenants = new TreeSet<>(cacheShares.keySet());
    tenants.addAll(maxInFlights.keySet());
    tenants.addAll(maxRates.keySet());
    tenants.addAll(bursts.keySet());
    StringBuilder sb = new StringBuilder();
    for (String t : tenants) {
      sb.append(sb.length() == 0 ? "" : "; ").append(t).append(':');
      if (cacheShares.containsKey(t)) {
        sb.append(" cache_share=").append(cacheShares.get(t)).append('%');
      }
      if (maxInFlights.containsKey(t)) {
        sb.append(" max_in_flight=").append(maxInFlights.get(t));
      }
      if (maxRates.containsKey(t)) {
        sb.append(" max_rate=").append(maxRates.get(t)).append("/s");
      }
      if (bursts.containsKey(t)) {
        sb.append(" burst=").append(bursts.get(t));
      }
    }
    return sb.length() == 0 ? "none" : sb.toString();
  }
}
