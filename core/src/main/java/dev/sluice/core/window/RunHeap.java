package dev.sluice.core.window;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * A priority queue for items that mostly arrive in order: those not below the last one in order go
 * to the end of a sorted run (an {@link ArrayDeque}, O(1) in and out); the others to a heap. The
 * head is the smaller of the two heads, so {@link #peek} and {@link #poll} give exactly what one
 * {@link PriorityQueue} of all the items would (ties, which only the same event read twice can
 * make, in either order).
 *
 * <p>Why: a poll reads rows in (time_next, id) order, and the window's timer queue and the fair
 * tree's FIFOs order them by the same keys, so in a backlog nearly every event takes the O(1) path
 * instead of two sift-downs through a heap of up to cache_size events (a pointer chase through
 * events scattered in memory: it was a quarter of the dispatcher's CPU samples in a drain). Out of
 * order items (retries, higher priorities) cost what they did. Not thread-safe (dispatcher thread).
 */
public final class RunHeap<T> {
  private final Comparator<? super T> order;
  private final ArrayDeque<T> run = new ArrayDeque<>();
  private final PriorityQueue<T> rest;

  public RunHeap(Comparator<? super T> order) {
    this.order = order;
    this.rest = new PriorityQueue<>(order);
  }

  public void add(T item) {
    T last = run.peekLast();
    if (last == null || order.compare(item, last) >= 0) {
      run.addLast(item);
    } else {
      rest.add(item);
    }
  }

  /** The least item, or null when empty. */
  public T peek() {
    T a = run.peekFirst();
    T b = rest.peek();
    if (a == null) {
      return b;
    }
    return b != null && order.compare(b, a) < 0 ? b : a;
  }

  /** Removes and returns the least item, or null when empty. */
  public T poll() {
    T a = run.peekFirst();
    T b = rest.peek();
    if (a == null) {
      return rest.poll();
    }
    if (b != null && order.compare(b, a) < 0) {
      return rest.poll();
    }
    return run.pollFirst();
  }

  public boolean isEmpty() {
    return run.isEmpty() && rest.isEmpty();
  }

  int size() {
    return run.size() + rest.size();
  }
}
