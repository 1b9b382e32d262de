package dev.sluice.db.store;

import java.util.List;

/**
 * Upkeep and figures of one queue table: the purger's deletes of settled rows, and the counts the
 * queue's stats, the metrics and {@code sluice queue stats} show.
 */
public interface MaintenanceStore extends QueueStore {

  /** Deletes up to {@code limit} acked or cancelled events settled before {@code beforeNs}. */
  int purge(long beforeNs, int limit);

  /**
   * Deletes up to {@code limit} acked or cancelled events without a dedup key ({@code dedup_key}
   * NULL) settled in [{@code fromNs}, {@code beforeNs}): the purge of a queue whose keyed rows are
   * kept longer ({@code dedup_window}). It reads that range of the (state, time_next) index and
   * skips the keyed rows in it, so keep the range short. Only for a table with the column.
   */
  int purgeUnkeyed(long fromNs, long beforeNs, int limit);

  /** Row counts by state; scans the poll index, so not for hot paths. */
  StateCounts counts();

  /**
   * The due time of the earliest pending event, if any: one seek on the poll index, cheap at any
   * table size (unlike {@link #counts}).
   */
  java.util.OptionalLong oldestPendingDueNs();

  /** Row counts by tenant and state, busiest tenants first; scans the table (operators only). */
  List<TenantCounts> countsByTenant(int limit);
}
