package dev.sluice.db.store;

/** One tenant's rows in a queue table, by state. */
public record TenantCounts(String tenant, StateCounts counts) {
  /** Rows that still matter to the tenant: pending, fired and dead. */
  public long open() {
    return counts.pending() + counts.fired() + counts.dead();
  }
}
