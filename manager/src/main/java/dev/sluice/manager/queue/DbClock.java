package dev.sluice.manager.queue;

import java.time.Clock;
import java.time.Instant;
import java.util.function.LongSupplier;

/**
 * The shard database's clock as seen from this manager: the local {@link Clock} plus a measured
 * offset. The database clock is the reference for {@code time_next} (DESIGN.md, "Time"), so a
 * manager whose host clock is skewed still never fires early.
 *
 * <p>Each {@link #sync} brackets one read of the server's clock between two local readings. The
 * server read happened somewhere in that bracket, so {@code server - localAfter} is a lower bound
 * of the true offset: using it can make the manager late by at most one round trip, never early.
 *
 * <p>Thread-safe: the offset is a volatile written by the syncing thread and read by any.
 */
public final class DbClock {
  private final Clock local;
  private volatile long offsetNs;
  private volatile boolean synced;

  public DbClock(Clock local) {
    this.local = local;
  }

  /** Now on the database's clock, in ns since the epoch. */
  public long nowNs() {
    return localNs() + offsetNs;
  }

  /** Measures the offset against {@code serverNow} (a read of the server clock). */
  public void sync(LongSupplier serverNow) {
    long before = localNs();
    long server = serverNow.getAsLong();
    long after = localNs();
    if (after - before > 1_000_000_000L) {
      return; // a slow round trip gives a poor bound; keep the previous one
    }
    offsetNs = server - after;
    synced = true;
  }

  public boolean synced() {
    return synced;
  }

  public long offsetNs() {
    return offsetNs;
  }

  private long localNs() {
    Instant i = local.instant();
    return i.getEpochSecond() * 1_000_000_000L + i.getNano();
  }
}
