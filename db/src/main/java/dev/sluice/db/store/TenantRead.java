package dev.sluice.db.store;

/**
 * One tenant's part of a per-tenant poll: up to {@code limit} of its pending rows in poll order,
 * after {@code after} — or from its oldest when {@code after} is null.
 */
public record TenantRead(String tenant, int limit, PollPosition after) {
  public TenantRead {
    if (tenant == null) {
      throw new IllegalArgumentException("tenant must not be null");
    }
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1, was " + limit + " (" + tenant + ")");
    }
  }
}
