package dev.sluice.core.fairness;

/**
 * One tenant's figures on one queue.
 *
 * @param queued events held in the window (due or soon due)
 * @param inFlight events fired and not yet settled
 * @param dispatched events fired since the queue started
 * @param waitNsTotal how long those events waited after they came due, added up (ns): over {@code
 *     dispatched}, the mean wait
 * @param recentMaxWaitNs the longest wait among the tenant's events fired in the last 10–20 s (ns)
 * @param rateLimited whether the last fire round passed the tenant over for its rate ({@link
 *     TenantRates})
 */
public record TenantStats(
    String tenant,
    long queued,
    long inFlight,
    long dispatched,
    long waitNsTotal,
    long recentMaxWaitNs,
    boolean rateLimited) {

  public TenantStats(
      String tenant,
      long queued,
      long inFlight,
      long dispatched,
      long waitNsTotal,
      long recentMaxWaitNs) {
    this(tenant, queued, inFlight, dispatched, waitNsTotal, recentMaxWaitNs, false);
  }
}
