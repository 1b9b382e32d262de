package dev.sluice.bench;

import java.util.function.BooleanSupplier;

/** Waiting for a condition in a bench's own thread, with a bound and the condition's name. */
final class Await {
  private Await() {}

  /**
   * Polls {@code done} every {@code pollMs} until it holds; throws, naming {@code what}, after
   * {@code seconds}.
   */
  static void until(String what, int seconds, long pollMs, BooleanSupplier done)
      throws InterruptedException {
    long limit = System.nanoTime() + seconds * 1_000_000_000L;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > limit) {
        throw new IllegalStateException("waited " + seconds + " s for " + what);
      }
      Thread.sleep(pollMs);
    }
  }
}
