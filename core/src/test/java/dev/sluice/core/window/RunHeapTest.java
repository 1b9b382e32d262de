package dev.sluice.core.window;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RunHeapTest {
  @Test
  void givesWhatOnePriorityQueueGivesWhateverTheOrderOfArrival() {
    Random r = new Random(42);
    for (int round = 0; round < 200; round++) {
      RunHeap<Long> q = new RunHeap<>(Comparator.naturalOrder());
      PriorityQueue<Long> ref = new PriorityQueue<>();
      long next = 0;
      int inOrderPercent = r.nextInt(101);
      for (int step = 0; step < 2_000; step++) {
        int op = r.nextInt(10);
        if (op < 6) {
          // Mostly ascending arrivals, some out of order, some equal.
          long v = r.nextInt(100) < inOrderPercent ? (next += r.nextInt(3)) : r.nextInt(1_000);
          q.add(v);
          ref.add(v);
        } else if (op < 8) {
          assertEquals(ref.peek(), q.peek());
        } else {
          assertEquals(ref.poll(), q.poll());
        }
        assertEquals(ref.size(), q.size());
        assertEquals(ref.isEmpty(), q.isEmpty());
      }
      while (!ref.isEmpty()) {
        assertEquals(ref.poll(), q.poll());
      }
      assertTrue(q.isEmpty());
      assertNull(q.peek());
      assertNull(q.poll());
    }
  }

  @Test
  void inOrderArrivalsNeverTouchTheHeapAndOutOfOrderOnesStillComeFirst() {
    RunHeap<Integer> q = new RunHeap<>(Comparator.naturalOrder());
    q.add(5);
    q.add(7);
    q.add(9);
    q.add(6); // below the run's end: the heap
    q.add(1);
    assertEquals(1, q.poll());
    assertEquals(5, q.poll());
    assertEquals(6, q.poll());
    assertEquals(7, q.peek());
    assertEquals(7, q.poll());
    assertEquals(9, q.poll());
    assertNull(q.poll());
  }
}
