package dev.sluice.core.loop;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * When a loop's unexpected error is logged with its stack: at most every {@link #EVERY_NS} per
 * loop, on the loop's ticker; the errors between are logged as one line. Used by core's {@link
 * LoopFaults} and by the manager's channel publishers, so that both follow the one rule.
 *
 * <p>Thread-safe: each loop's thread asks for its own loop.
 */
public final class StackThrottle {
  /** The shortest time between two stack traces of one loop's errors. */
  public static final long EVERY_NS = TimeUnit.SECONDS.toNanos(10);

  private final Ticker ticker;
  private final Map<String, Long> loggedAt = new ConcurrentHashMap<>();

  public StackThrottle(Ticker ticker) {
    this.ticker = ticker;
  }

  /** True when {@code loop}'s error is to be logged with its stack now (which is then noted). */
  public boolean stackDue(String loop) {
    long now = ticker.nanos();
    Long last = loggedAt.get(loop);
    if (last == null || now - last >= EVERY_NS) {
      loggedAt.put(loop, now);
      return true;
    }
    return false;
  }
}
