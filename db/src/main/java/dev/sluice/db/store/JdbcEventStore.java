package dev.sluice.db.store;

import dev.sluice.db.QueueTable;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The {@link EventStore} of one queue table, on jOOQ over a pooled DataSource: each port is served
 * by its own class — {@link JdbcDispatchStore}, {@link JdbcOrderingStore}, {@link
 * JdbcOperatorStore}, {@link JdbcMaintenanceStore} — which share the table's compare-and-set
 * ({@link EventCas}); this class hands each call to the one that serves it, and gives the ports
 * apart ({@link #dispatch()} ...) to callers that hold only one.
 *
 * <p>Fencing: a leader's store ends each of its own writes (fire, ack, release, mark dead, purge,
 * hold) with its {@link Fence}'s condition, and one refused throws {@link FencedOffException}.
 * Operators' commands through it ({@link #cancel}, {@link #replayDead}, {@link #purgeDead}, {@link
 * #skipDead}) stay unfenced.
 */
public final class JdbcEventStore implements EventStore {
  private final EventCas cas;
  private final JdbcDispatchStore dispatch;
  private final JdbcOrderingStore ordering;
  private final JdbcOperatorStore operator;
  private final JdbcMaintenanceStore maintenance;

  /**
   * An unfenced store: for writes that are not a shard leader's — acks that arrive at a manager
   * that no longer dispatches the queue (each is a CAS on the epoch the receiver was given, right
   * wherever it applies), operators' commands, tools and tests.
   */
  public JdbcEventStore(DataSource dataSource, QueueTable queue) {
    this(dataSource, queue, null);
  }

  /** A leader's store: every write it makes on its own is conditioned on {@code fence}. */
  public JdbcEventStore(DataSource dataSource, QueueTable queue, Fence fence) {
    this.cas = new EventCas(dataSource, queue, fence);
    KeyReads keyReads = cas.hot.ordered() ? new KeyReads(cas.ctx, queue, cas.hot) : null;
    this.dispatch =
        new JdbcDispatchStore(cas, new FireTransaction(dataSource, queue, cas.hot), keyReads);
    this.ordering = new JdbcOrderingStore(cas, keyReads);
    this.operator = new JdbcOperatorStore(cas, ordering);
    this.maintenance = new JdbcMaintenanceStore(cas);
  }

  /** The fence this store's writes are conditioned on, or null. */
  public Fence fence() {
    return cas.fence;
  }

  /** The queue engine's port alone. */
  public DispatchStore dispatch() {
    return dispatch;
  }

  /** The ordering port alone. */
  public OrderingStore ordering() {
    return ordering;
  }

  /** The operators' port alone. */
  public OperatorStore operator() {
    return operator;
  }

  /** The purge and counts port alone. */
  public MaintenanceStore maintenance() {
    return maintenance;
  }

  @Override
  public String queue() {
    return cas.q.name();
  }

  @Override
  public long serverTimeNs() {
    return cas.serverTimeNs();
  }

  // ---------------------------------------------------------------- SQL for EXPLAIN

  /** The poll query with its values inlined, for {@code EXPLAIN} in tests and the CLI. */
  public String pollSql(long dueBeforeNs, int limit) {
    return dispatch.pollSql(dueBeforeNs, limit);
  }

  /** The continuation poll with its values inlined, for {@code EXPLAIN}. */
  public String pollAfterSql(long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return dispatch.pollAfterSql(dueBeforeNs, afterTimeNextNs, afterId, limit);
  }

  /** The several-tenant poll with its values inlined, for {@code EXPLAIN}. */
  public String pollTenantsSql(List<TenantRead> reads, long dueBeforeNs) {
    return dispatch.pollTenantsSql(reads, dueBeforeNs);
  }

  /** The SQL of {@link #pendingTenants}, with its values inlined (for EXPLAIN in tests). */
  public String pendingTenantsSql(int limit) {
    return dispatch.pendingTenantsSql(limit);
  }

  /** The SQL of {@link #pendingTenantsAfter}, with its values inlined (for EXPLAIN in tests). */
  public String pendingTenantsAfterSql(String after, int limit) {
    return dispatch.pendingTenantsAfterSql(after, limit);
  }

  /** The ack compare-and-set with its values inlined (fenced when this store is). */
  public String ackSql(List<Long> ids, long epoch, long nowNs) {
    return dispatch.ackSql(ids, epoch, nowNs);
  }

  // ---------------------------------------------------------------- dispatch

  @Override
  public void onBadRow(BadRowListener listener) {
    dispatch.onBadRow(listener);
  }

  @Override
  public void knownHeads(java.util.function.LongPredicate known) {
    dispatch.knownHeads(known);
  }

  @Override
  public List<EventRow> pollPending(long dueBeforeNs, int limit) {
    return dispatch.pollPending(dueBeforeNs, limit);
  }

  @Override
  public List<EventRow> pollPendingAfter(
      long dueBeforeNs, long afterTimeNextNs, long afterId, int limit) {
    return dispatch.pollPendingAfter(dueBeforeNs, afterTimeNextNs, afterId, limit);
  }

  @Override
  public List<EventRow> pollTenants(List<TenantRead> reads, long dueBeforeNs) {
    return dispatch.pollTenants(reads, dueBeforeNs);
  }

  @Override
  public List<TenantDue> pendingTenants(int limit) {
    return dispatch.pendingTenants(limit);
  }

  @Override
  public List<TenantDue> pendingTenantsAfter(String after, int limit) {
    return dispatch.pendingTenantsAfter(after, limit);
  }

  @Override
  public Map<EventRef, CasOutcome> fire(Collection<EventRef> refs, long deadlineNs) {
    return dispatch.fire(refs, deadlineNs);
  }

  @Override
  public FireResult fireAsPolled(List<FireRef> refs, java.util.function.LongSupplier deadlineNs) {
    return dispatch.fireAsPolled(refs, deadlineNs);
  }

  @Override
  public Map<EventRef, CasOutcome> ack(Collection<EventRef> refs, long nowNs) {
    return dispatch.ack(refs, nowNs);
  }

  @Override
  public Map<EventRef, Extension.Outcome> extend(Collection<Extension> extensions) {
    return dispatch.extend(extensions);
  }

  @Override
  public Map<EventRef, CasOutcome> release(Collection<Release> releases) {
    return dispatch.release(releases);
  }

  @Override
  public List<EventRef> expiredFired(long beforeNs, int limit) {
    return dispatch.expiredFired(beforeNs, limit);
  }

  @Override
  public Map<Object, Integer> firedPerKey(Collection<Object> keys, Collection<Long> except) {
    return dispatch.firedPerKey(keys, except);
  }

  @Override
  public Map<EventRef, CasOutcome> markDead(Map<EventRef, String> reasons) {
    return dispatch.markDead(reasons);
  }

  // ---------------------------------------------------------------- ordering

  @Override
  public Map<EventRef, CasOutcome> hold(Collection<EventRef> refs) {
    return ordering.hold(refs);
  }

  @Override
  public Map<EventRef, CasOutcome> unhold(Collection<EventRef> refs) {
    return ordering.unhold(refs);
  }

  @Override
  public List<EventRow> firstPendingOfKeys(Collection<Object> keys) {
    return ordering.firstPendingOfKeys(keys);
  }

  @Override
  public List<Object> heldKeys(int limit) {
    return ordering.heldKeys(limit);
  }

  @Override
  public int unholdAll(int limit) {
    return ordering.unholdAll(limit);
  }

  @Override
  public int haltedKeyCount(int limit) {
    return ordering.haltedKeyCount(limit);
  }

  // ---------------------------------------------------------------- operators

  @Override
  public Map<Long, CasOutcome> cancel(
      Collection<Long> ids, long nowNs, java.util.function.Predicate<String> tenantAllowed) {
    return operator.cancel(ids, nowNs, tenantAllowed);
  }

  @Override
  public Map<Long, Long> epochs(Collection<Long> ids) {
    return operator.epochs(ids);
  }

  @Override
  public List<EventRow> listDead(long afterId, int limit) {
    return operator.listDead(afterId, limit);
  }

  @Override
  public List<OutOfRangeRow> deadOutOfRange(int limit) {
    return operator.deadOutOfRange(limit);
  }

  @Override
  public Map<EventRef, CasOutcome> replayDead(Collection<EventRef> refs) {
    return operator.replayDead(refs);
  }

  @Override
  public java.util.Optional<Found> find(long id) {
    return operator.find(id);
  }

  @Override
  public Map<EventRef, CasOutcome> purgeDead(Collection<EventRef> refs) {
    return operator.purgeDead(refs);
  }

  @Override
  public Map<Long, String> deadReasons(Collection<Long> ids) {
    return operator.deadReasons(ids);
  }

  @Override
  public List<HaltedKey> haltedKeys(int limit) {
    return operator.haltedKeys(limit);
  }

  @Override
  public CasOutcome skipDead(EventRef ref, long nowNs) {
    return operator.skipDead(ref, nowNs);
  }

  // ---------------------------------------------------------------- maintenance

  @Override
  public int purge(long beforeNs, int limit) {
    return maintenance.purge(beforeNs, limit);
  }

  @Override
  public int purgeUnkeyed(long fromNs, long beforeNs, int limit) {
    return maintenance.purgeUnkeyed(fromNs, beforeNs, limit);
  }

  @Override
  public StateCounts counts() {
    return maintenance.counts();
  }

  @Override
  public java.util.OptionalLong oldestPendingDueNs() {
    return maintenance.oldestPendingDueNs();
  }

  @Override
  public List<TenantCounts> countsByTenant(int limit) {
    return maintenance.countsByTenant(limit);
  }
}
