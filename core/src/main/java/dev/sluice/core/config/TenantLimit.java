package dev.sluice.core.config;

/**
 * One tenant's limits on one queue (or on every queue), overriding what the queue's comment says
 * for all tenants. An unset field keeps the queue's value.
 *
 * <pre>
 * tenant_limits:
 *   - tenant: acme            # required
 *     queue: order_events     # optional; "*" (the default) means every queue
 *     cache_share: 60%        # this tenant's share of the window, 1-100%
 *     max_in_flight: 200      # this tenant's fired-and-unsettled events; 0 = no cap
 * </pre>
 *
 * @param queue the queue table it applies to, or {@link #ANY_QUEUE}
 * @param tenant the tenant id, as held in the {@code tenant} column
 * @param cacheShare percent of the window the tenant may hold, or null to keep the queue's
 * @param maxInFlight the tenant's in-flight cap (0 = none), or null to keep the queue's
 */
public record TenantLimit(String queue, String tenant, Integer cacheShare, Integer maxInFlight) {
  public static final String ANY_QUEUE = "*";

  public TenantLimit {
    if (tenant == null) {
      throw new IllegalArgumentException("tenant_limits[]: 'tenant' is required");
    }
    String where = "tenant_limits[tenant=" + tenant + "]";
    if (tenant.length() > 64) {
      throw new IllegalArgumentException(where + ": a tenant id is at most 64 characters");
    }
    queue = queue == null || queue.isBlank() ? ANY_QUEUE : queue.strip();
    if (cacheShare == null && maxInFlight == null) {
      throw new IllegalArgumentException(
          where + ": give cache_share, max_in_flight or both (neither would change anything)");
    }
    if (cacheShare != null && (cacheShare < 1 || cacheShare > 100)) {
      throw new IllegalArgumentException(
          where + ": cache_share must be 1% to 100%, was " + cacheShare + "%");
    }
    if (maxInFlight != null && maxInFlight < 0) {
      throw new IllegalArgumentException(
          where + ": max_in_flight must be 0 (no cap) or more, was " + maxInFlight);
    }
  }

  /** Whether this override concerns queue {@code name}. */
  public boolean appliesTo(String name) {
    return queue.equals(ANY_QUEUE) || queue.equals(name);
  }
}
