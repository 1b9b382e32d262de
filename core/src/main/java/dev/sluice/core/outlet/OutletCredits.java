package dev.sluice.core.outlet;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fixed number of credits for an {@link Outlet} with no flow control of its own (an in-process
 * outlet, a test's): its {@link Outlet#maxInFlight}, {@link Outlet#free}, {@link Outlet#tryReserve}
 * and {@link Outlet#unreserve} delegate here. An atomic counter, safe across the dispatcher threads
 * of every shard the outlet is attached to.
 */
public final class OutletCredits {
  private final int max;
  private final AtomicInteger taken = new AtomicInteger();

  public OutletCredits(int max) {
    this.max = max;
  }

  public int max() {
    return max;
  }

  public int free() {
    return Math.max(0, max - taken.get());
  }

  /** Takes one credit if one is free. */
  public boolean tryTake() {
    if (taken.incrementAndGet() <= max) {
      return true;
    }
    taken.decrementAndGet();
    return false;
  }

  public void giveBack() {
    taken.decrementAndGet();
  }
}
