package dev.sluice.core.loop;

import java.time.Clock;
import java.time.Instant;
import java.util.function.LongSupplier;

/**
 * The shard database's clock as seen from this manager, and the manager's one clock: its {@link
 * #ticker} measures elapsed time for every part of core. The database clock is the reference for
 * {@code time_next} (so a manager whose host clock is skewed still never fires early), and elapsed
 * time is measured on the monotonic ticker: the estimate is the server's time at the last {@link
 * #sync} plus the ticker's time since. The host's wall clock is used only before the first sync, so
 * a host clock stepped forward or back (NTP, a resumed VM, {@code date -s}) changes nothing: no
 * event fires early, no ack deadline passes early.
 *
 * <p>Each sync brackets one read of the server's clock between two ticker readings. The server read
 * happened somewhere in that bracket, so anchoring it at the bracket's end makes the estimate a
 * lower bound of the server's time: late by at most one round trip, never early. A sync whose round
 * trip took over a second is a poor bound: it is used only if there is no earlier one.
 *
 * <p>Thread-safe: the anchor is one immutable object in a volatile field, written by the syncing
 * thread and read by any.
 */
public final class DbClock {
  private static final long SLOW_SYNC_NS = 1_000_000_000L;

  private final Clock wall;
  private final Ticker ticker;

  /** The server's time {@code serverNs} was read no later than ticker reading {@code tickNs}. */
  private record Anchor(long serverNs, long tickNs) {}

  private volatile Anchor anchor;

  /** When the last sync was tried (ticker ns); Long.MIN_VALUE / 2 before the first. */
  private volatile long lastSyncTick = Long.MIN_VALUE / 2;

  /** On the system's monotonic ticker ({@link Ticker#SYSTEM}). */
  public DbClock(Clock wall) {
    this(wall, Ticker.SYSTEM);
  }

  /**
   * @param wall the host's clock, read only until the first sync
   * @param ticker monotonic nanoseconds (its origin is arbitrary)
   */
  public DbClock(Clock wall, Ticker ticker) {
    this.wall = wall;
    this.ticker = ticker;
  }

  /** Now on the database's clock, in ns since the epoch. */
  public long nowNs() {
    Anchor a = anchor;
    if (a == null) {
      return wallNs();
    }
    return a.serverNs + (ticker.nanos() - a.tickNs);
  }

  /** Monotonic now ({@link Ticker#nanos}): for pauses, deadlines and ages, never a time of day. */
  public long monoNs() {
    return ticker.nanos();
  }

  /** The monotonic ticker this clock measures elapsed time on. */
  public Ticker ticker() {
    return ticker;
  }

  /** Measures against {@code serverNow} (a read of the server clock). */
  public void sync(LongSupplier serverNow) {
    long before = ticker.nanos();
    lastSyncTick = before;
    long server = serverNow.getAsLong();
    long after = ticker.nanos();
    if (after - before > SLOW_SYNC_NS && anchor != null) {
      return; // a slow round trip gives a poor bound; keep the previous one
    }
    anchor = new Anchor(server, after);
  }

  /**
   * How long ago a sync was last tried, by any thread: the queues of a shard share its clock, so
   * one of them re-measuring it is enough for all.
   */
  public long sinceSyncNs() {
    return ticker.nanos() - lastSyncTick;
  }

  public boolean synced() {
    return anchor != null;
  }

  /** How far the database's clock is ahead of this host's wall clock now (for status pages). */
  public long offsetNs() {
    return anchor == null ? 0 : nowNs() - wallNs();
  }

  private long wallNs() {
    Instant i = wall.instant();
    return i.getEpochSecond() * 1_000_000_000L + i.getNano();
  }
}
