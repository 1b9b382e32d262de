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
 *     max_rate: 50            # this tenant's events fired a second, per shard; 0 = no limit
 *     burst: 10               # with max_rate: events at once after a quiet spell
 * </pre>
 *
 * @param queue the queue table it applies to, or {@link #ANY_QUEUE}
 * @param tenant the tenant id, as held in the {@code tenant} column
 * @param cacheShare percent of the window the tenant may hold, or null to keep the queue's
 * @param maxInFlight the tenant's in-flight cap (0 = none), or null to keep the queue's
 * @param maxRate the tenant's events a second per shard (0 = none), or null to keep the queue's
 *     {@code tenant_max_rate}
 * @param burst with a rate: events that may go at once (at least 1), or null to keep the queue's
 */
public record TenantLimit(
    String queue,
    String tenant,
    Integer cacheShare,
    Integer maxInFlight,
    Integer maxRate,
    Integer burst) {
  public static final String ANY_QUEUE = "*";

  public TenantLimit(String queue, String tenant, Integer cacheShare, Integer maxInFlight) {
    this(queue, tenant, cacheShare, maxInFlight, null, null);
  }

  public TenantLimit {
    if (tenant == null) {
      throw new IllegalArgumentException("tenant_limits[]: 'tenant' is required");
    }
    String where = "tenant_limits[tenant=" + tenant + "]";
    if (tenant.length() > 64) {
      throw new IllegalArgumentException(where + ": a tenant id is at most 64 characters");
    }
    queue = queue == null || queue.isBlank() ? ANY_QUEUE : queue.strip();
    if (cacheShare == null && maxInFlight == null && maxRate == null && burst == null) {
      throw new IllegalArgumentException(
          where
              + ": give cache_share, max_in_flight, max_rate or burst (none would change"
              + " anything)");
    }
    if (maxRate != null && maxRate < 0) {
      throw new IllegalArgumentException(
          where + ": max_rate must be 0 (no limit) or more events a second, was " + maxRate);
    }
    if (burst != null && burst < 1) {
      throw new IllegalArgumentException(where + ": burst must be at least 1 event, was " + burst);
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
