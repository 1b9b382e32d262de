package dev.sluice.core.window;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * The in-memory window of a queue's upcoming events: a bounded set of pending events, split into
 * those not yet due (a timer heap by due time) and those due (a {@link FairTree}: tenants in turn,
 * then actor paths, then priority). Only due events compete: a tenant whose events are all in the
 * future takes no turn.
 *
 * <p>The window is bounded twice: at most {@code capacity} events and at most {@code byteCapacity}
 * bytes of them (their {@link CachedEvent#bytes}, as sent), so that large rows cannot fill the
 * heap; an event that would pass either is refused ({@link Added#FULL}), unless the window is empty
 * (one event always fits, so a queue of large events still moves).
 *
 * <p>Each tenant may hold at most its cap of events (the same for all, or per tenant), so a noisy
 * tenant cannot fill the window and hide quiet tenants' due events on disk. With {@code fair} off
 * it is one plain FIFO by (priority, due time, id), for comparison, with no per-tenant share of the
 * window; still, a tenant at its in-flight cap or with no receiver that accepts it waits aside
 * while the others' events go ({@link FairTree}'s FIFO mode).
 *
 * <p>A pure data structure with no locks and no threads: the {@link Dispatcher} thread owns it.
 * Removal by id is lazy: a removed event stays in its heap and is skipped when it surfaces.
 */
public final class WindowCache {
  /** What {@link #add} did. */
  public enum Added {
    ADDED,
    DUPLICATE,
    FULL,
    TENANT_CAPPED
  }

  private static final Comparator<CachedEvent> BY_DUE =
      (a, b) -> a.dueNs != b.dueNs ? (a.dueNs < b.dueNs ? -1 : 1) : Long.compare(a.id, b.id);

  private final int capacity;
  private final long byteCapacity;

  /** The sum of the held events' {@link CachedEvent#bytes}. */
  private long bytes;

  private final ToIntFunction<String> tenantCap;
  private final boolean fair;

  /** Every live event by id: the one copy that counts. */
  private final Map<Long, CachedEvent> byId = new HashMap<>();

  private final Map<String, Integer> heldByTenant = new HashMap<>();
  private final RunHeap<CachedEvent> scheduled = new RunHeap<>(BY_DUE);
  private final FairTree ready;
  private final Predicate<CachedEvent> live = e -> byId.get(e.boxedId) == e;

  public WindowCache(int capacity) {
    this(capacity, capacity, true);
  }

  public WindowCache(int capacity, int tenantCap, boolean fair) {
    this(capacity, t -> tenantCap, fair);
  }

  /** A window whose tenants may each hold {@code tenantCap.applyAsInt(tenant)} events. */
  public WindowCache(int capacity, ToIntFunction<String> tenantCap, boolean fair) {
    this(capacity, Long.MAX_VALUE, tenantCap, fair);
  }

  /** A window of at most {@code capacity} events and {@code byteCapacity} bytes of them. */
  public WindowCache(
      int capacity, long byteCapacity, ToIntFunction<String> tenantCap, boolean fair) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1, was " + capacity);
    }
    if (byteCapacity < 1) {
      throw new IllegalArgumentException("byteCapacity must be >= 1, was " + byteCapacity);
    }
    this.capacity = capacity;
    this.byteCapacity = byteCapacity;
    this.tenantCap = tenantCap;
    this.fair = fair;
    this.ready = new FairTree(!fair);
  }

  public int capacity() {
    return capacity;
  }

  /** The events {@code tenant} may hold: at least one, at most the whole window. */
  public int tenantCap(String tenant) {
    return Math.max(1, Math.min(tenantCap.applyAsInt(tenant), capacity));
  }

  /** Live events held (due or not). */
  public int size() {
    return byId.size();
  }

  public int room() {
    return capacity - byId.size();
  }

  public long byteCapacity() {
    return byteCapacity;
  }

  /** Bytes of the events held (due or not). */
  public long bytes() {
    return bytes;
  }

  public boolean contains(long id) {
    return byId.containsKey(id);
  }

  /** The same, for an id already boxed (the dispatcher's checks of a polled row). */
  boolean contains(Long id) {
    return byId.containsKey(id);
  }

  /** Events held by one tenant. */
  public int held(String tenant) {
    return heldByTenant.getOrDefault(tenant, 0);
  }

  /** Events held per tenant. */
  public Map<String, Integer> countByTenant() {
    return Map.copyOf(heldByTenant);
  }

  /** Adds an event unless the window or its tenant's share is full, or it holds that id. */
  public Added add(CachedEvent e) {
    if (byId.containsKey(e.boxedId)) {
      return Added.DUPLICATE;
    }
    if (byId.size() >= capacity || (!byId.isEmpty() && bytes + e.bytes > byteCapacity)) {
      return Added.FULL;
    }
    if (fair && held(e.tenant) >= tenantCap(e.tenant)) {
      return Added.TENANT_CAPPED;
    }
    byId.put(e.boxedId, e);
    heldByTenant.merge(e.tenant, 1, Integer::sum);
    bytes += e.bytes;
    scheduled.add(e);
    return Added.ADDED;
  }

  /** The event of that id, or null. */
  public CachedEvent get(long id) {
    return byId.get(id);
  }

  /** Forgets an event (cancelled, say). Returns whether it was held. */
  public boolean remove(long id) {
    CachedEvent e = byId.remove(id);
    if (e == null) {
      return false;
    }
    release(e);
    return true;
  }

  /**
   * Forgets {@code tenant}'s events beyond the first {@code keep} in poll order (due time, id): the
   * ones a per-tenant poll would read last, so the next poll reads back what was dropped, not
   * something else. Returns the events dropped. They stay pending in the table; this only makes
   * room for other tenants' events.
   */
  public List<CachedEvent> trim(String tenant, int keep) {
    int held = held(tenant);
    if (held <= Math.max(0, keep)) {
      return List.of();
    }
    List<CachedEvent> mine = new ArrayList<>(held);
    for (CachedEvent e : byId.values()) {
      if (e.tenant.equals(tenant)) {
        mine.add(e);
      }
    }
    mine.sort(BY_DUE.reversed());
    List<CachedEvent> dropped = mine.subList(0, held - Math.max(0, keep));
    for (CachedEvent e : dropped) {
      remove(e.id);
    }
    return dropped;
  }

  private void release(CachedEvent e) {
    bytes -= e.bytes;
    heldByTenant.computeIfPresent(e.tenant, (k, n) -> n <= 1 ? null : n - 1);
  }

  /** Moves events due at or before {@code nowNs} from the timer heap into the fair tree. */
  public void promoteDue(long nowNs) {
    CachedEvent e;
    while ((e = scheduled.peek()) != null && e.dueNs <= nowNs) {
      scheduled.poll();
      if (live.test(e)) {
        ready.add(e, path(e));
      }
    }
  }

  private List<String> path(CachedEvent e) {
    if (!fair || e.actorPath.isEmpty()) {
      return List.of(e.tenant);
    }
    List<String> p = new ArrayList<>(1 + e.actorPath.size());
    p.add(e.tenant);
    p.addAll(e.actorPath);
    return p;
  }

  /** The due time of the earliest event not yet due, or {@link Long#MAX_VALUE}. */
  public long nextDueNs() {
    CachedEvent e;
    while ((e = scheduled.peek()) != null && !live.test(e)) {
      scheduled.poll();
    }
    return e == null ? Long.MAX_VALUE : e.dueNs;
  }

  /** Whether a due event may be waiting (removed ones are counted until they surface). */
  public boolean hasReady() {
    return ready.size() > 0;
  }

  /** Takes the next due event in fair order; null when none is due. */
  public CachedEvent takeReady() {
    return takeReady(t -> true, e -> true);
  }

  /**
   * Takes the next due event in fair order among tenants and events the dispatcher can serve now (a
   * tenant at its in-flight cap, or an event whose class has no free credits, waits its turn).
   */
  public CachedEvent takeReady(Predicate<String> tenantOk, Predicate<CachedEvent> eventOk) {
    CachedEvent e = ready.take(tenantOk, eventOk, live);
    if (e != null) {
      byId.remove(e.boxedId);
      release(e);
    }
    return e;
  }
}
