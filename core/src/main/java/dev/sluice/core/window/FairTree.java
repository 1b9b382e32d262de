package dev.sluice.core.window;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The due events of a queue as a tree: tenant, then each segment of the actor path, then a FIFO by
 * (priority, due time, id) at every node. Each node serves its children round-robin, its own events
 * taking one equal turn (like Loki's hierarchical scheduler): with own events [0,1,2] and children
 * a[10,11,12], b[20,21,22] a node yields 0,10,20,1,11,21,… A tenant with a million-event backlog
 * delays another tenant's event by at most one round.
 *
 * <p>A child with nothing left leaves the rotation. When it gets events again it is <em>new</em>:
 * new children are served before the rotation, in the order they arrived, once each — then they
 * join the rotation's end (FQ-CoDel's sparse-flow rule). So a quiet tenant's occasional event goes
 * out with the next free credit instead of after a turn of every busy tenant, and a tenant cannot
 * profit from it beyond one event per time it runs empty.
 *
 * <p>In FIFO mode (a queue with {@code fair=false}) the tenants take no turns: each take serves the
 * most urgent event by (priority, due time, id) among the tenants and work classes that may be
 * served now. Events are still kept per tenant, so that an event no receiver accepts, or a tenant
 * at its in-flight cap, waits aside while the events behind it go.
 *
 * <p>Pure data structure, no locks: owned by the dispatcher thread. Removal is lazy: a removed
 * event stays in its FIFO and is dropped when it reaches the head.
 */
public final class FairTree {
  /** (priority, due time, id), written out: this is the hottest comparison in dispatch. */
  static final Comparator<CachedEvent> BY_PRIORITY =
      (a, b) -> {
        if (a.priority != b.priority) {
          return a.priority < b.priority ? -1 : 1;
        }
        if (a.dueNs != b.dueNs) {
          return a.dueNs < b.dueNs ? -1 : 1;
        }
        return Long.compare(a.id, b.id);
      };

  private final Node root = new Node(null, "");

  /** Most urgent first across tenants, with no turns (fair=false). */
  private final boolean fifo;

  public FairTree() {
    this(false);
  }

  public FairTree(boolean fifo) {
    this.fifo = fifo;
  }

  /** Adds a due event under {@code path} (tenant, actor segments…; empty: the root FIFO). */
  public void add(CachedEvent e, List<String> path) {
    Node n = root;
    for (String seg : path) {
      Node child = n.children.get(seg);
      if (child == null) {
        child = new Node(n, seg);
        n.children.put(seg, child);
      }
      if (child.size == 0 && !fifo) {
        n.fresh.addLast(child);
      }
      n.size++;
      n = child;
    }
    if (n.localSize == 0 && !fifo) {
      n.fresh.addLast(n);
    }
    n.local.computeIfAbsent(e.workClass, k -> new RunHeap<>(BY_PRIORITY)).add(e);
    n.localSize++;
    n.size++;
  }

  /** Events held, counting lazily removed ones not yet dropped. */
  public int size() {
    return root.size;
  }

  /**
   * Takes the next event in round-robin order.
   *
   * @param tenantOk whether a tenant (a child of the root) may be served now
   * @param eventOk whether an event at the head of its FIFO may be served now
   * @param live whether an event is still held (not removed meanwhile)
   * @return the event, or null when no eligible event is due
   */
  public CachedEvent take(
      Predicate<String> tenantOk, Predicate<CachedEvent> eventOk, Predicate<CachedEvent> live) {
    return fifo ? takeFifo(tenantOk, eventOk, live) : take(root, true, tenantOk, eventOk, live);
  }

  /**
   * FIFO mode: the most urgent servable head across tenants (a tenant is asked only when its head
   * would win, so a take costs one look per tenant with due events).
   */
  private CachedEvent takeFifo(
      Predicate<String> tenantOk, Predicate<CachedEvent> eventOk, Predicate<CachedEvent> live) {
    Node best = null;
    CachedEvent bestHead = null;
    var it = root.children.values().iterator();
    while (it.hasNext()) {
      Node c = it.next();
      RunHeap<CachedEvent> q = bestLocal(c, eventOk, live);
      if (c.size == 0) {
        it.remove();
        continue;
      }
      if (q == null) {
        continue;
      }
      CachedEvent head = q.peek();
      if ((bestHead == null || BY_PRIORITY.compare(head, bestHead) < 0) && tenantOk.test(c.name)) {
        best = c;
        bestHead = head;
      }
    }
    if (best == null) {
      return null;
    }
    CachedEvent got = takeLocal(best, eventOk, live);
    if (best.size == 0) {
      root.children.remove(best.name);
    }
    return got;
  }

  private CachedEvent take(
      Node n,
      boolean isRoot,
      Predicate<String> tenantOk,
      Predicate<CachedEvent> eventOk,
      Predicate<CachedEvent> live) {
    // New entries first, once each (one not served now keeps its place among the new), then
    // the rotation.
    int fresh = n.fresh.size();
    for (int i = 0; i < fresh; i++) {
      Node entry = n.fresh.pollFirst();
      CachedEvent got = serve(n, entry, isRoot, tenantOk, eventOk, live);
      if (entry.holds(n)) {
        (got != null ? n.turns : n.fresh).addLast(entry);
      }
      if (got != null) {
        return got;
      }
    }
    int turns = n.turns.size();
    for (int i = 0; i < turns; i++) {
      Node entry = n.turns.pollFirst();
      CachedEvent got = serve(n, entry, isRoot, tenantOk, eventOk, live);
      if (entry.holds(n)) {
        n.turns.addLast(entry);
      }
      if (got != null) {
        return got;
      }
    }
    return null;
  }

  /** One turn of {@code entry} (a child of {@code n}, or {@code n} itself for its own events). */
  private CachedEvent serve(
      Node n,
      Node entry,
      boolean isRoot,
      Predicate<String> tenantOk,
      Predicate<CachedEvent> eventOk,
      Predicate<CachedEvent> live) {
    if (entry == n) {
      return takeLocal(n, eventOk, live);
    }
    CachedEvent got = null;
    if (!isRoot || tenantOk.test(entry.name)) {
      got = take(entry, false, tenantOk, eventOk, live);
    }
    if (entry.size == 0) {
      n.children.remove(entry.name);
    }
    return got;
  }

  /**
   * The most urgent eligible event among the heads of the node's per-class FIFOs. Keeping one FIFO
   * per work class means a class at its credit share does not block other classes behind it.
   */
  private static CachedEvent takeLocal(
      Node n, Predicate<CachedEvent> eventOk, Predicate<CachedEvent> live) {
    RunHeap<CachedEvent> best = bestLocal(n, eventOk, live);
    if (best == null) {
      return null;
    }
    CachedEvent got = best.poll();
    n.localSize--;
    shrink(n);
    if (best.isEmpty()) {
      n.local.values().remove(best);
    }
    return got;
  }

  /**
   * The node's per-class FIFO whose head is the most urgent eligible one, or null; drops removed
   * events found at the heads on the way.
   */
  private static RunHeap<CachedEvent> bestLocal(
      Node n, Predicate<CachedEvent> eventOk, Predicate<CachedEvent> live) {
    RunHeap<CachedEvent> best = null;
    var it = n.local.values().iterator();
    while (it.hasNext()) {
      RunHeap<CachedEvent> q = it.next();
      CachedEvent head;
      while ((head = q.peek()) != null && !live.test(head)) {
        q.poll();
        n.localSize--;
        shrink(n);
      }
      if (head == null) {
        it.remove();
      } else if (eventOk.test(head)
          && (best == null || BY_PRIORITY.compare(head, best.peek()) < 0)) {
        best = q;
      }
    }
    return best;
  }

  /** One event left node {@code n}: every ancestor holds one fewer. */
  private static void shrink(Node n) {
    for (Node x = n; x != null; x = x.parent) {
      x.size--;
    }
  }

  private static final class Node {
    final Node parent;
    final String name;

    /** This node's own events: one FIFO per work class. */
    final Map<String, RunHeap<CachedEvent>> local = new HashMap<>(2);

    int localSize;
    final Map<String, Node> children = new HashMap<>();

    /** Whose turn is next: child nodes, and this node itself for its own events. */
    final ArrayDeque<Node> turns = new ArrayDeque<>();

    /** Entries that just got events after having none: served before {@link #turns}. */
    final ArrayDeque<Node> fresh = new ArrayDeque<>();

    int size;

    Node(Node parent, String name) {
      this.parent = parent;
      this.name = name;
    }

    /** Whether this entry of {@code owner}'s turns still has events to serve. */
    boolean holds(Node owner) {
      return this == owner ? localSize > 0 : size > 0;
    }
  }
}
