package dev.sluice.core.loop;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker that moves only when the test moves it: timing rules are checked without sleeping. */
public final class FakeTicker implements Ticker {
  private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

  @Override
  public long nanos() {
    return now.get();
  }

  public void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }
}
