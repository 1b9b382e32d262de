package dev.sluice.db.schedule;

import java.util.ArrayList;
import java.util.List;

/**
 * Which occurrences of a schedule the leader inserts in one pass, and where the schedule goes on:
 * every occurrence from {@code next_ns} up to {@code now + ahead}; those due more than {@code
 * grace} ago were missed (no leader ran then) and follow the schedule's {@link CatchUp}. Pure: no
 * clock, no database.
 *
 * @param times the occurrence times to insert, ascending (each becomes one event's {@code
 *     time_next})
 * @param next the schedule's next occurrence after them (the new {@code next_ns})
 * @param skippedFrom the first missed occurrence skipped, or 0 when none was
 * @param skippedTo the last missed occurrence skipped, or 0
 */
public record Occurrences(List<Long> times, long next, long skippedFrom, long skippedTo) {
  /** The most missed occurrences {@link CatchUp#ALL} inserts; the others are skipped (logged). */
  public static final int MAX_CATCH_UP = 1000;

  /** The most occurrences inserted in one pass (a fast interval goes on in the next pass). */
  public static final int MAX_PER_PASS = 1000;

  public boolean skipped() {
    return skippedFrom != 0;
  }

  /**
   * The plan of one pass.
   *
   * @param nextNs the schedule's next occurrence (not 0)
   * @param nowNs now on the database's clock
   * @param aheadNs how long before its time an occurrence is inserted
   * @param graceNs how late an occurrence may be and still count as on time (a failover's gap)
   */
  public static Occurrences plan(
      Recurrence r, CatchUp catchUp, long nextNs, long nowNs, long aheadNs, long graceNs) {
    List<Long> times = new ArrayList<>();
    long missedBefore = nowNs - graceNs;
    long t = nextNs;
    long skippedFrom = 0;
    long skippedTo = 0;
    if (t < missedBefore) {
      switch (catchUp) {
        case ALL -> {
          while (t < missedBefore && times.size() < MAX_CATCH_UP) {
            times.add(t);
            t = r.next(t);
          }
          if (t < missedBefore) {
            skippedFrom = t;
            skippedTo = r.lastBefore(t, missedBefore);
            t = r.next(skippedTo);
          }
        }
        case ONE -> {
          long last = r.lastBefore(t, missedBefore);
          if (last != t) {
            skippedFrom = t;
            skippedTo = previous(r, t, last);
          }
          times.add(last);
          t = r.next(last);
        }
        case NONE -> {
          skippedFrom = t;
          skippedTo = r.lastBefore(t, missedBefore);
          t = r.next(skippedTo);
        }
      }
    }
    while (t <= nowNs + aheadNs && times.size() < MAX_PER_PASS) {
      times.add(t);
      t = r.next(t);
    }
    return new Occurrences(List.copyOf(times), t, skippedFrom, skippedTo);
  }

  /** The occurrence just before {@code last} (at least {@code from}): the last one ONE skips. */
  private static long previous(Recurrence r, long from, long last) {
    return r.lastBefore(from, last);
  }
}
