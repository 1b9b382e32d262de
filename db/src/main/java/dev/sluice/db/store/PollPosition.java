package dev.sluice.db.store;

/**
 * A place in poll order: (time_next, id), the order of the poll indexes. Polls that continue
 * "after" a position read the rows strictly after it.
 */
public record PollPosition(long timeNextNs, long id) implements Comparable<PollPosition> {

  /** Before every row. */
  public static final PollPosition FIRST = new PollPosition(Long.MIN_VALUE, Long.MIN_VALUE);

  /** The position of this event: reading after it skips it. */
  public static PollPosition at(long timeNextNs, long id) {
    return new PollPosition(timeNextNs, id);
  }

  /** The position of {@code row}: reading after it skips the row. */
  public static PollPosition of(EventRow row) {
    return new PollPosition(row.timeNextNs(), row.id());
  }

  /** The position just before the row at (timeNextNs, id): reading after it reads that row. */
  public static PollPosition before(long timeNextNs, long id) {
    return id == Long.MIN_VALUE
        ? new PollPosition(timeNextNs - 1, Long.MAX_VALUE)
        : new PollPosition(timeNextNs, id - 1);
  }

  @Override
  public int compareTo(PollPosition o) {
    if (timeNextNs != o.timeNextNs) {
      return timeNextNs < o.timeNextNs ? -1 : 1;
    }
    return Long.compare(id, o.id);
  }

  /** The earlier of the two; null counts as "not set". */
  public static PollPosition earlier(PollPosition a, PollPosition b) {
    if (a == null) {
      return b;
    }
    if (b == null) {
      return a;
    }
    return a.compareTo(b) <= 0 ? a : b;
  }
}
