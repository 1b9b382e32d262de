package dev.sluice.manager.channel;

import dev.sluice.core.loop.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A ticker that moves only when the test moves it: the publishers' timing rules are checked without
 * sleeping. (Core has the same for its own tests; its test classes are not shipped.)
 */
final class FakeTicker implements Ticker {
  private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

  @Override
  public long nanos() {
    return now.get();
  }

  void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }

  void advanceNanos(long ns) {
    now.addAndGet(ns);
  }
}
