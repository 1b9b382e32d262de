package dev.sluice.bench;

import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.outlet.OutletCredits;

/**
 * The credits of a bench's in-process outlet: at most {@code max} events in flight, whatever their
 * work class. Any thread ({@link OutletCredits} is atomic).
 */
abstract class CreditedOutlet implements Outlet {
  protected final OutletCredits credits;

  CreditedOutlet(int max) {
    this.credits = new OutletCredits(max);
  }

  @Override
  public int maxInFlight() {
    return credits.max();
  }

  @Override
  public int free() {
    return credits.free();
  }

  @Override
  public boolean tryReserve(String workClass) {
    return credits.tryTake();
  }

  @Override
  public void unreserve(String workClass) {
    credits.giveBack();
  }
}
