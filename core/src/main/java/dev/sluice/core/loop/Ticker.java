package dev.sluice.core.loop;

/**
 * Monotonic nanoseconds, with an arbitrary origin: the one source of elapsed time in core. Every
 * pause, deadline, rate and "how long since" is measured on it, never on a wall clock; {@link
 * DbClock} adds the database's time of day on top of it. Tests hand in a ticker they move by hand,
 * so a timing rule is checked without sleeping.
 */
@FunctionalInterface
public interface Ticker {
  /** The system's monotonic clock ({@link System#nanoTime}): the only real ticker. */
  Ticker SYSTEM = System::nanoTime;

  /** Now, in ns since an arbitrary origin; only differences between two readings mean anything. */
  long nanos();
}
