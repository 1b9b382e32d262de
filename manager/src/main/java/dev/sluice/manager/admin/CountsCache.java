package dev.sluice.manager.admin;

import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.store.StateCounts;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The row counts {@code QueueStats} answers with, per queue and shard, reused for {@link
 * #FRESH_NS}: counting scans the table, and the RPC needs no credentials, so callers must not be
 * able to make the manager scan a table as often as they like. However many ask at once, one of
 * them counts (the others wait for its answer) and at most once per {@link #FRESH_NS}.
 *
 * <p>Threads: any (gRPC executor threads). Entries are replaced whole; each queue's count runs
 * under that queue's lock, which guards nothing else and is never held with another.
 */
public final class CountsCache {
  static final long FRESH_NS = TimeUnit.SECONDS.toNanos(1);

  private record Entry(long atMono, StateCounts counts) {}

  private final LongSupplier ticker;
  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Object> locks = new ConcurrentHashMap<>();

  public CountsCache(LongSupplier ticker) {
    this.ticker = ticker;
  }

  public StateCounts counts(QueueManager q) {
    return counts(q.shard(), q.queue(), q::counts);
  }

  /** The counts of {@code queue} on {@code shard}, from {@code count} at most once per FRESH_NS. */
  public StateCounts counts(
      String shard, String queue, java.util.function.Supplier<StateCounts> count) {
    String key = shard + "\u0000" + queue;
    Entry e = entries.get(key);
    if (fresh(e)) {
      return e.counts();
    }
    synchronized (locks.computeIfAbsent(key, k -> new Object())) {
      e = entries.get(key);
      if (fresh(e)) {
        return e.counts(); // counted by another caller while this one waited
      }
      StateCounts c = count.get();
      entries.put(key, new Entry(ticker.getAsLong(), c));
      return c;
    }
  }

  private boolean fresh(Entry e) {
    return e != null && ticker.getAsLong() - e.atMono() < FRESH_NS;
  }
}
