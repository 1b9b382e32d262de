package dev.sluice.core.loop;

/**
 * Lets a background loop sleep until a timeout or an early {@link #wake()} — whichever comes first.
 * A wake that arrives while the loop is busy is remembered, so it is never lost.
 */
public final class Waiter {
  private final Ticker ticker;
  private boolean woken;

  public Waiter(Ticker ticker) {
    this.ticker = ticker;
  }

  public synchronized void wake() {
    woken = true;
    notifyAll();
  }

  /** Waits up to {@code nanos}, or returns at once if woken since the last wait. */
  public synchronized void await(long nanos) throws InterruptedException {
    long deadline = ticker.nanos() + nanos;
    while (!woken) {
      long left = deadline - ticker.nanos();
      if (left <= 0) {
        break;
      }
      wait(left / 1_000_000, (int) (left % 1_000_000));
    }
    woken = false;
  }
}
