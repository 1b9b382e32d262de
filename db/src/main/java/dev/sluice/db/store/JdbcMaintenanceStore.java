package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.*;

import dev.sluice.db.EventState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jooq.Record;
import org.jooq.impl.DSL;

/**
 * The {@link MaintenanceStore} of one queue table: the purger's bounded deletes (fenced for a
 * leader's store) and the counts by state and tenant.
 */
final class JdbcMaintenanceStore extends CasStore implements MaintenanceStore {

  JdbcMaintenanceStore(EventCas cas) {
    super(cas);
  }

  @Override
  public int purge(long beforeNs, int limit) {
    // Fenced, not checked: a purge that deletes nothing is common; the leader's other writes find
    // out that the lease is gone.
    return c.ctx
        .deleteFrom(c.t)
        .where(
            c.state
                .in(c.sv(EventState.ACKED), c.sv(EventState.CANCELLED))
                .and(c.timeNext.lt(beforeNs)))
        .and(c.fenced)
        .orderBy(c.timeNext)
        .limit(limit)
        .execute();
  }

  @Override
  public int purgeUnkeyed(long fromNs, long beforeNs, int limit) {
    return c.ctx
        .deleteFrom(c.t)
        .where(c.state.in(c.sv(EventState.ACKED), c.sv(EventState.CANCELLED)))
        .and(c.timeNext.ge(fromNs))
        .and(c.timeNext.lt(beforeNs))
        .and(DSL.field(DSL.name(DEDUP_KEY)).isNull())
        .and(c.fenced)
        .orderBy(c.timeNext)
        .limit(limit)
        .execute();
  }

  @Override
  public StateCounts counts() {
    long[] n = new long[EventState.values().length + 1];
    for (Record r : c.ctx.select(c.state, DSL.count()).from(c.t).groupBy(c.state).fetch()) {
      EventState s = c.q.decodeState(r.get(0));
      n[s == null ? n.length - 1 : s.ordinal()] += r.get(1, Long.class);
    }
    return new StateCounts(n[0], n[1], n[2], n[3], n[4], oldestPendingDueNs().orElse(0), n[5]);
  }

  @Override
  public java.util.OptionalLong oldestPendingDueNs() {
    Long oldest =
        c.ctx
            .select(DSL.min(c.timeNext))
            .from(c.t)
            .where(c.state.eq(c.sv(EventState.PENDING)))
            .fetchOne(0, Long.class);
    return oldest == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(oldest);
  }

  @Override
  public List<TenantCounts> countsByTenant(int limit) {
    Map<String, long[]> by = new HashMap<>();
    for (Record r :
        c.ctx
            .select(c.tenant, c.state, DSL.count(), DSL.min(c.timeNext))
            .from(c.t)
            .groupBy(c.tenant, c.state)
            .fetch()) {
      String ten = r.get(0, String.class);
      long[] n = by.computeIfAbsent(ten == null ? "" : ten, k -> new long[7]);
      EventState s = c.q.decodeState(r.get(1));
      n[s == null ? 6 : s.ordinal()] += r.get(2, Long.class);
      if (s == EventState.PENDING) {
        n[5] = r.get(3, Long.class);
      }
    }
    List<TenantCounts> out = new ArrayList<>();
    by.forEach(
        (ten, n) ->
            out.add(
                new TenantCounts(ten, new StateCounts(n[0], n[1], n[2], n[3], n[4], n[5], n[6]))));
    out.sort(
        java.util.Comparator.comparingLong(TenantCounts::open)
            .reversed()
            .thenComparing(TenantCounts::tenant));
    return out.size() > limit ? List.copyOf(out.subList(0, limit)) : out;
  }
}
