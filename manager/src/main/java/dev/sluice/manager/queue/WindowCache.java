package dev.sluice.manager.queue;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * The in-memory window of a queue's upcoming events: a bounded set of pending events, split into
 * those not yet due (a timer heap by due time) and those due (a FIFO per tenant by (priority, due
 * time, id), tenants served round-robin).
 *
 * <p>A pure data structure with no locks and no threads: the {@link Dispatcher} thread owns it.
 * Removal by id is lazy: a removed event stays in its heap and is skipped when it surfaces.
 */
public final class WindowCache {
  private static final Comparator<CachedEvent> BY_DUE =
      Comparator.<CachedEvent>comparingLong(e -> e.dueNs).thenComparingLong(e -> e.id);
  private static final Comparator<CachedEvent> BY_PRIORITY =
      Comparator.<CachedEvent>comparingInt(e -> e.priority)
          .thenComparingLong(e -> e.dueNs)
          .thenComparingLong(e -> e.id);

  private final int capacity;

  /** Every live event by id: the one copy that counts. */
  private final Map<Long, CachedEvent> byId = new HashMap<>();

  private final PriorityQueue<CachedEvent> scheduled = new PriorityQueue<>(BY_DUE);
  private final Map<String, PriorityQueue<CachedEvent>> readyByTenant = new HashMap<>();

  /** Tenants with due events, in round-robin order. */
  private final ArrayDeque<String> tenantTurns = new ArrayDeque<>();

  private int readyCount;

  public WindowCache(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1, was " + capacity);
    }
    this.capacity = capacity;
  }

  public int capacity() {
    return capacity;
  }

  /** Live events held (due or not). */
  public int size() {
    return byId.size();
  }

  public int room() {
    return capacity - byId.size();
  }

  /** Events held per tenant (O(size): for periodic stats, not the hot path). */
  public Map<String, Integer> countByTenant() {
    Map<String, Integer> out = new HashMap<>();
    for (CachedEvent e : byId.values()) {
      out.merge(e.tenant, 1, Integer::sum);
    }
    return out;
  }

  public boolean contains(long id) {
    return byId.containsKey(id);
  }

  /** Adds an event unless the window is full or already holds that id. */
  public boolean add(CachedEvent e) {
    if (byId.size() >= capacity || byId.containsKey(e.id)) {
      return false;
    }
    byId.put(e.id, e);
    scheduled.add(e);
    return true;
  }

  /** Forgets an event (cancelled, say). Returns whether it was held. */
  public boolean remove(long id) {
    CachedEvent e = byId.remove(id);
    return e != null;
  }

  /** Moves events due at or before {@code nowNs} from the timer heap to their tenant's FIFO. */
  public void promoteDue(long nowNs) {
    CachedEvent e;
    while ((e = scheduled.peek()) != null && e.dueNs <= nowNs) {
      scheduled.poll();
      if (byId.get(e.id) != e) {
        continue; // removed meanwhile
      }
      PriorityQueue<CachedEvent> fifo = readyByTenant.get(e.tenant);
      if (fifo == null) {
        fifo = new PriorityQueue<>(BY_PRIORITY);
        readyByTenant.put(e.tenant, fifo);
        tenantTurns.addLast(e.tenant);
      }
      fifo.add(e);
      readyCount++;
    }
  }

  /** The due time of the earliest event not yet due, or {@link Long#MAX_VALUE}. */
  public long nextDueNs() {
    CachedEvent e;
    while ((e = scheduled.peek()) != null && byId.get(e.id) != e) {
      scheduled.poll();
    }
    return e == null ? Long.MAX_VALUE : e.dueNs;
  }

  /** Whether a due event may be waiting (removed ones are counted until they surface). */
  public boolean hasReady() {
    return readyCount > 0;
  }

  /**
   * Takes the next due event: the next tenant in turn, and its most urgent event. Returns null when
   * none is due.
   */
  public CachedEvent takeReady() {
    while (!tenantTurns.isEmpty()) {
      String tenant = tenantTurns.pollFirst();
      PriorityQueue<CachedEvent> fifo = readyByTenant.get(tenant);
      CachedEvent e;
      while ((e = fifo.poll()) != null) {
        readyCount--;
        if (byId.get(e.id) == e) {
          break;
        }
      }
      if (fifo.isEmpty()) {
        readyByTenant.remove(tenant);
      } else {
        tenantTurns.addLast(tenant);
      }
      if (e != null) {
        byId.remove(e.id);
        return e;
      }
    }
    return null;
  }
}
