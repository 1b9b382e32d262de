package dev.sluice.core.queue.dispatch;

import dev.sluice.db.store.PollPosition;
import java.util.Map;
import java.util.Set;

/**
 * The window as the poller sees it from its own thread: the figures the dispatcher publishes, the
 * positions of the rows the window let go of, and the row size the poller's reads are sized by. The
 * window itself, and every change to it, stays the dispatcher thread's ({@link WindowFeed}
 * implements this).
 *
 * <p>Safe from the poller's thread: the figures are volatile, the let-go positions a concurrent
 * map; {@link #sawRows} is the poller's own.
 */
public interface WindowView {

  /**
   * How many rows the next read may bring: the window's free events, and no more than its free
   * bytes hold at the estimated row size ({@link #sawRows}). At least one while the window holds
   * nothing.
   */
  int cacheRoom();

  /** A read brought rows of at most {@code maxRowBytes} each (poller thread). */
  void sawRows(long maxRowBytes);

  /** Events in the window and parked (as last published). */
  int cachedCount();

  /** Tenants with events in the window (as last published). */
  Set<String> heldTenants();

  /** The events {@code tenant} has in the window (as last published). */
  int held(String tenant);

  /** The window slots {@code tenant} may hold. */
  int tenantCap(String tenant);

  /** Whether the last poll over all tenants brought rows a tenant's share could not take. */
  boolean lastPollCapped();

  /** When a poll last brought an event new to the window and already due (monotonic ns). */
  long lastDueNewsMono();

  /**
   * Whether the ordered event {@code id} is held by this manager (window, firing or in flight) as
   * admitted at its key: a poll reading it again needs no check of its key, the dispatcher skips
   * it.
   */
  boolean holdsOrdered(long id);

  /** The dispatcher's settle count: a poll records it when it begins. */
  long settledSeq();

  /**
   * Per tenant, the position just before the earliest pending row the window let go of since the
   * last call; each is taken once.
   */
  Map<String, PollPosition> drainLetGo();
}
