package dev.sluice.core.queue.poll;

import dev.sluice.core.loop.Waiter;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * What the shard's binlog follower tells one queue's poller: that pending rows were committed, and
 * when they come due.
 *
 * <p>Threads: the follower ({@code sluice-<shard>-binlog}) calls {@link #pending} and {@link
 * #wake}; the poller reads {@link #followed}, {@link #nextDueNs} and calls {@link #covered}. The
 * due times are guarded by this object's monitor; the rest is volatile.
 *
 * <p>A row due within the poller's current read-ahead wakes it at once (its next read finds the
 * row: the binlog only carries committed rows). A row due later is remembered by the slot of its
 * due time (a quarter of the read-ahead, 1-50 ms), so that the poller reads it just before it is
 * due instead of at its next safety poll: it rests until half a read-ahead before the slot starts,
 * and that read covers the whole slot. At most {@link #MAX_SLOTS} slots are kept (204 s of them at
 * the default read-ahead); past that the latest are dropped, and until a read covers the last one
 * dropped the poller keeps its polling pace ({@link #overflowUntilNs}): those rows are read on
 * time, as if the binlog were not followed.
 */
public final class RowNews {
  static final long MAX_SLOT_NS = TimeUnit.MILLISECONDS.toNanos(50);
  static final long MIN_SLOT_NS = TimeUnit.MILLISECONDS.toNanos(1);

  static final int MAX_SLOTS = 4096;

  /** The end of the latest slot dropped when the set was full; Long.MIN_VALUE when none. */
  private long overflowUntil = Long.MIN_VALUE;

  private final Waiter poller;
  private final TreeSet<Long> due = new TreeSet<>();
  private volatile BooleanSupplier following = () -> false;

  /**
   * The earliest time_next told since the poller's sweep last started from the front: a row before
   * its cursor means the sweep must start again to find it.
   */
  private final java.util.concurrent.atomic.AtomicLong earliestTold =
      new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);

  /** The same since the recent poll (per-tenant rounds) last started from a second ago. */
  private final java.util.concurrent.atomic.AtomicLong earliestToldRecent =
      new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);

  /**
   * Rows told due now, by id, with when they were told (monotonic ns): the read they woke must find
   * them. A binlog event may reach the follower a moment before its transaction is visible to
   * others (the server sends it once written to the binlog, and commits in the engine just after),
   * so a read that missed one is made again ({@link #unread}) for up to {@link #EXPECT_NS}.
   */
  private final java.util.LinkedHashMap<Long, Long> expected = new java.util.LinkedHashMap<>();

  static final long EXPECT_NS = TimeUnit.MILLISECONDS.toNanos(20);
  static final int MAX_EXPECTED = 1024;

  /**
   * The ids the last reads returned (at most {@link #MAX_RECENT}): a row often reaches the window
   * before its own binlog event reaches the follower (a read woken by an earlier row found it too),
   * and a row already read is not expected again.
   */
  private final java.util.LinkedHashMap<Long, Boolean> recentlyRead =
      new java.util.LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
          return size() > MAX_RECENT;
        }
      };

  static final int MAX_RECENT = 4096;

  /** The poller's current read-ahead, published by it each pass. */
  private volatile long readAheadNs;

  public RowNews(Waiter poller) {
    this.poller = poller;
  }

  /** Whose binlog connection tells whether this queue is followed (the shard's, for a term). */
  public void following(BooleanSupplier source) {
    this.following = source;
    poller.wake();
  }

  /** Whether the binlog is followed for this queue now: then the poller rests between rows. */
  boolean followed() {
    return following.getAsBoolean();
  }

  /** Wakes the poller (the follower connected or lost its connection, or a row it cannot read). */
  public void wake() {
    poller.wake();
  }

  /**
   * A pending row {@code id} ({@code -1}: not known) was committed with this {@code time_next}
   * (database clock, ns), told at {@code mono} (monotonic ns); {@code nowNs} is the database clock
   * now.
   */
  public void pending(long id, long timeNextNs, long nowNs, long mono) {
    earliestTold.accumulateAndGet(timeNextNs, Math::min);
    earliestToldRecent.accumulateAndGet(timeNextNs, Math::min);
    if (timeNextNs <= nowNs + readAheadNs) {
      if (id >= 0) {
        synchronized (this) {
          if (expected.size() < MAX_EXPECTED && !recentlyRead.containsKey(id)) {
            expected.put(id, mono);
          }
        }
      }
      poller.wake();
      return;
    }
    long size = slotNs();
    long slot = Math.floorDiv(timeNextNs, size) * size;
    boolean earliest;
    synchronized (this) {
      if (due.size() >= MAX_SLOTS && !due.contains(slot)) {
        if (slot > due.last()) {
          overflowUntil = Math.max(overflowUntil, slot + size);
          return;
        }
        overflowUntil = Math.max(overflowUntil, due.pollLast() + size);
      }
      earliest = due.add(slot) && due.first() == slot;
    }
    if (earliest) {
      // The poller's pause may end after this row is due: it recomputes it.
      poller.wake();
    }
  }

  /** Whether a pending row due before {@code cursorNs} was told since the sweep started. */
  boolean toldBefore(long cursorNs) {
    return earliestTold.get() <= cursorNs;
  }

  /** The poller's sweep starts from the front of the poll index (it reads what was told). */
  void sweepStarted() {
    earliestTold.set(Long.MAX_VALUE);
  }

  /**
   * The earliest time_next told since the last call ({@link Long#MAX_VALUE}: none), for the recent
   * poll of per-tenant rounds: none means no new row to read; one behind its cursor means it reads
   * from a second ago again.
   */
  long takeToldRecent() {
    return earliestToldRecent.getAndSet(Long.MAX_VALUE);
  }

  /**
   * The poller wakes and its sweep starts again from the front of the poll index: a row the
   * follower could not read was changed, or the binlog had a gap (rows may lie behind the cursor).
   */
  public void readAgain() {
    earliestTold.set(Long.MIN_VALUE);
    earliestToldRecent.set(Long.MIN_VALUE);
    poller.wake();
  }

  /**
   * The poller's next pass reads from the front of the poll index again, without a wake: a row it
   * read was left out of the window for a later pass (a completion event whose group could not be
   * sealed yet).
   */
  void readAgainLater() {
    earliestTold.set(Long.MIN_VALUE);
    earliestToldRecent.set(Long.MIN_VALUE);
  }

  /** A read returned these rows: those expected are found. */
  void read(java.util.List<dev.sluice.db.store.EventRow> rows) {
    if (!followed()) {
      return;
    }
    synchronized (this) {
      for (dev.sluice.db.store.EventRow r : rows) {
        Long id = r.id();
        if (expected.remove(id) == null) {
          recentlyRead.put(id, Boolean.TRUE);
        }
      }
    }
  }

  /**
   * Whether a row told due is still unread, told less than {@link #EXPECT_NS} before {@code mono}
   * (older ones are given up: the window was full, say; a later read finds them).
   */
  synchronized boolean unread(long mono) {
    var it = expected.values().iterator();
    while (it.hasNext()) {
      if (mono - it.next() > EXPECT_NS) {
        it.remove();
      } else {
        return true;
      }
    }
    return false;
  }

  /** The slots' length: a quarter of the read-ahead, 1-50 ms. */
  long slotNs() {
    return Math.max(MIN_SLOT_NS, Math.min(MAX_SLOT_NS, readAheadNs / 4));
  }

  /** The start of the earliest slot remembered, or {@link Long#MAX_VALUE}. */
  synchronized long nextDueNs() {
    return due.isEmpty() ? Long.MAX_VALUE : due.first();
  }

  /**
   * Until when rows may be due that the remembered slots do not hold (the set overflowed): the
   * poller keeps its polling pace until a read covers it. Long.MIN_VALUE when none.
   */
  synchronized long overflowUntilNs() {
    return overflowUntil;
  }

  /**
   * A read of every row due up to {@code horizonNs} starts now: the slots it covers whole are
   * forgotten.
   */
  synchronized void covered(long horizonNs) {
    due.headSet(horizonNs - slotNs(), true).clear();
    if (overflowUntil <= horizonNs) {
      overflowUntil = Long.MIN_VALUE;
    }
  }

  void readAhead(long ns) {
    this.readAheadNs = ns;
  }

  /** Due times remembered (for tests). */
  public synchronized int remembered() {
    return due.size();
  }
}
