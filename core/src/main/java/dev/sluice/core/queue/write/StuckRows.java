package dev.sluice.core.queue.write;

import dev.sluice.core.loop.Backoff;
import dev.sluice.core.loop.Ticker;
import dev.sluice.core.queue.dispatch.Completion;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Acks and releases whose write failed for their own row alone (found by splitting the batch they
 * came in): each is retried on its own, after the queue's backoff (at least {@link #MIN_DELAY_NS}),
 * while the batches behind it are written as usual. After {@link #MAX_TRIES} failed tries the
 * {@link AckBatcher} gives up on it: the row is reported and made dead with the database's error as
 * its reason, or left as it is when even that fails.
 *
 * <p>Owned by the ack writer's thread ({@code sluice-<shard>-<queue>-acks}); not thread-safe.
 */
final class StuckRows {
  /** Tries of a row's own write (the one that found it included) before giving up on it. */
  static final int MAX_TRIES = 5;

  /** The least time between two tries of one row, whatever the queue's min_backoff. */
  static final long MIN_DELAY_NS = TimeUnit.SECONDS.toNanos(1);

  /** One row's write, the tries it failed so far and when to try it next (monotonic ns). */
  static final class Stuck {
    final Completion completion;
    int tries;
    long dueMono;
    String error;

    Stuck(Completion completion) {
      this.completion = completion;
    }
  }

  private final List<Stuck> rows = new ArrayList<>();
  private final Ticker ticker;

  StuckRows(Ticker ticker) {
    this.ticker = ticker;
  }

  int size() {
    return rows.size();
  }

  /** A write that failed alone, for the first time: tried again after the backoff. */
  void add(Completion c, String error, Backoff backoff) {
    Stuck s = new Stuck(c);
    rows.add(s);
    failed(s, error, backoff);
  }

  /** Another failed try of {@code s}: whether its tries are used up (else it is kept). */
  boolean failed(Stuck s, String error, Backoff backoff) {
    s.tries++;
    s.error = error;
    if (s.tries >= MAX_TRIES) {
      return true;
    }
    later(s, backoff.delayNs(s.tries));
    return false;
  }

  /**
   * Keeps {@code s} for another try after {@code delayNs}, no try spent (the database was down).
   */
  void later(Stuck s, long delayNs) {
    s.dueMono = ticker.nanos() + Math.max(MIN_DELAY_NS, delayNs);
    if (!rows.contains(s)) {
      rows.add(s);
    }
  }

  /** Takes out the rows due for a try now. */
  List<Stuck> takeDue() {
    List<Stuck> due = new ArrayList<>();
    long now = ticker.nanos();
    for (Iterator<Stuck> it = rows.iterator(); it.hasNext(); ) {
      Stuck s = it.next();
      if (now - s.dueMono >= 0) {
        due.add(s);
        it.remove();
      }
    }
    return due;
  }
}
