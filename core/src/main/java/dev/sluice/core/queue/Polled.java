package dev.sluice.core.queue;

import dev.sluice.db.store.PollPosition;
import java.util.List;
import java.util.Map;

/**
 * What one poll hands the dispatcher ({@link Dispatcher#onPolled}, {@link WindowFeed#onPolled}):
 * its rows as window events, and what the dispatcher needs to judge them. Built on the poller's
 * thread.
 *
 * @param events the rows read, as window events, in the order read
 * @param settledSeqAtStart the dispatcher's settle count when the poll began: a row settled after
 *     that may still show pending in the poll's snapshot
 * @param full the poll came back with as many rows as it asked for: more may wait on disk
 * @param global the poll over all tenants (rows a tenant's cap turned away tell the poller to poll
 *     tenant by tenant)
 * @param part the most events any tenant may hold after it (its own cap still applies)
 * @param tenantStarts for a per-tenant round, where each tenant's read started ({@link
 *     PollPosition#FIRST}: from its oldest row); empty for other polls
 */
record Polled(
    List<CachedEvent> events,
    long settledSeqAtStart,
    boolean full,
    boolean global,
    int part,
    Map<String, PollPosition> tenantStarts) {

  /** A page of the poll over all tenants. */
  static Polled sweep(List<CachedEvent> events, long settledSeqAtStart, boolean full) {
    return new Polled(events, settledSeqAtStart, full, true, Integer.MAX_VALUE, Map.of());
  }

  /** The poll of recently due rows between per-tenant rounds. */
  static Polled recent(List<CachedEvent> events, long settledSeqAtStart, int part) {
    return new Polled(events, settledSeqAtStart, false, false, part, Map.of());
  }

  /** One statement of a per-tenant round. */
  static Polled tenants(
      List<CachedEvent> events,
      long settledSeqAtStart,
      int part,
      Map<String, PollPosition> tenantStarts) {
    return new Polled(events, settledSeqAtStart, false, false, part, Map.copyOf(tenantStarts));
  }
}
