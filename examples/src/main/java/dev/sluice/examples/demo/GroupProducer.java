package dev.sluice.examples.demo;

import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.client.InsertOutcome;
import dev.sluice.proto.v1.CancelStatus;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The application side of {@code sluice demo --groups}: groups of random sizes, each written the
 * usual way, its children (spread over the two grouped queues) and its completion in one
 * transaction; a fifth of the groups are sealed later, by their completion in a transaction of its
 * own 0.1–1.5 s after the children's. Sizes are mostly small, some medium, a few up to {@code
 * maxGroup}, and a few groups are empty (a completion alone: it fires at once).
 *
 * <ul>
 *   <li>A fifth of the completions go to {@code group_failfast_events} ({@code
 *       group_on_dead=fail_fast}), the others to {@code group_done_events} (wait_all).
 *   <li>About 1% of the children are doomed: their handler always fails, so they end dead.
 *   <li>About 2% are scheduled 2–4 s ahead and cancelled over gRPC right after the commit.
 *   <li>Every event carries a dedup key, inserted with {@code EventProducer.insertUnique}. Every
 *       {@link #REPEAT_EVERY}th child insert is followed by a repeat of a key already used (by this
 *       transaction or by a committed group), carrying this group's key: it must come back a
 *       duplicate of that event, and join no group.
 *   <li>A transaction that fails (a manager killed does not matter here, but the database turns
 *       read-only and restarts under the chaos) is tried again as it was: its dedup keys make the
 *       retry insert nothing that the failed attempt, should it have committed, inserted already.
 * </ul>
 *
 * <p>The writers pace the children at {@code rate} a second, all writers together.
 */
final class GroupProducer implements Runnable {
  static final int WRITERS = 2;
  static final String QUEUE_A = "group_a_events";
  static final String QUEUE_B = "group_b_events";
  static final String DONE = "group_done_events";
  static final String FAIL_FAST = "group_failfast_events";
  static final List<String> CHILD_QUEUES = List.of(QUEUE_A, QUEUE_B);
  static final List<String> COMPLETION_QUEUES = List.of(DONE, FAIL_FAST);
  static final int REPEAT_EVERY = 10;
  private static final int MAX_ATTEMPTS = 60;

  private final DemoDatabase.Shard shard;
  private final Map<String, Canceller> cancellers;
  private final GroupLedger ledger;
  private final int children;
  private final int maxGroup;
  private final long periodNs;
  private final long seed;
  private final AtomicLong written = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final ScheduledExecutorService sealer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "demo-group-sealer");
            t.setDaemon(true);
            return t;
          });

  /** Keys of committed children, to repeat: a bounded ring shared by the writers. */
  private final List<Repeatable> committedKeys = new ArrayList<>();

  private record Repeatable(String queue, String dedupKey, long id) {}

  /**
   * @param cancellers a canceller per grouped queue
   * @param children children to write in all (the groups' sizes add up to about this)
   * @param maxGroup the largest group
   * @param ratePerSecond children a second, all writers together
   */
  GroupProducer(
      DemoDatabase.Shard shard,
      Map<String, Canceller> cancellers,
      GroupLedger ledger,
      int children,
      int maxGroup,
      int ratePerSecond,
      long seed) {
    this.shard = shard;
    this.cancellers = cancellers;
    this.ledger = ledger;
    this.children = children;
    this.maxGroup = maxGroup;
    this.periodNs = 1_000_000_000L * WRITERS / ratePerSecond;
    this.seed = seed;
  }

  /** Children written (committed) so far. */
  long written() {
    return written.get();
  }

  @Override
  public void run() {
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      int writer = w;
      int share = children / WRITERS + (w < children % WRITERS ? 1 : 0);
      Thread t =
          new Thread(
              () -> {
                try {
                  write(writer, share);
                } catch (RuntimeException | Error e) {
                  failure.compareAndSet(null, e);
                }
              },
              "demo-group-writer-" + w);
      threads.add(t);
      t.start();
    }
    try {
      for (Thread t : threads) {
        t.join();
      }
      // The groups sealed later: their completions go in before the producer is done.
      sealer.shutdown();
      if (!sealer.awaitTermination(5, TimeUnit.MINUTES)) {
        throw new IllegalStateException("the sealer did not finish within 5 minutes");
      }
    } catch (InterruptedException e) {
      threads.forEach(Thread::interrupt);
      sealer.shutdownNow();
      Thread.currentThread().interrupt();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("a group writer failed: " + failure.get(), failure.get());
    }
  }

  /** The size of the next group: mostly small, some medium, a few large, a few empty. */
  int drawSize(Random random) {
    double d = random.nextDouble();
    if (d < 0.03) {
      return 0;
    }
    if (d < 0.70) {
      return 1 + random.nextInt(Math.min(20, maxGroup));
    }
    if (d < 0.95) {
      return 1 + random.nextInt(Math.min(100, maxGroup));
    }
    return 1 + random.nextInt(maxGroup);
  }

  private void write(int writer, int share) {
    Random random = new Random(seed + 104_729L * writer);
    long start = System.nanoTime();
    int done = 0;
    int groupNo = 0;
    long inserts = 0;
    while (done < share) {
      long due = start + done * periodNs;
      long wait;
      while ((wait = due - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
      int size = Math.min(drawSize(random), share - done);
      String key = String.format("w%d-g%05d", writer, ++groupNo);
      boolean failFast = random.nextDouble() < 0.2;
      boolean sealLater = random.nextDouble() < 0.2;
      GroupLedger.Group g =
          new GroupLedger.Group(key, failFast ? FAIL_FAST : DONE, size, sealLater);
      List<Child> planned = new ArrayList<>();
      // Half the groups of two or more put children in both queues for sure; the rest draw.
      boolean both = size >= 2 && random.nextBoolean();
      for (int i = 0; i < size; i++) {
        String queue = both && i < 2 ? CHILD_QUEUES.get(i) : CHILD_QUEUES.get(random.nextInt(2));
        boolean doomed = random.nextDouble() < 0.01;
        Duration delay =
            random.nextDouble() < 0.02 ? Duration.ofMillis(2000 + random.nextInt(2001)) : null;
        boolean repeatAfter = ++inserts % REPEAT_EVERY == 0;
        planned.add(
            new Child(
                queue, key + "-c" + i, i, doomed, delay, repeatAfter, random.nextInt(1 << 30)));
      }
      writeGroup(g, planned);
      if (sealLater) {
        long afterMs = 100 + random.nextInt(1401);
        sealer.schedule(() -> sealAlone(g), afterMs, TimeUnit.MILLISECONDS);
      }
      done += Math.max(1, size);
    }
  }

  private record Child(
      String queue,
      String dedupKey,
      int no,
      boolean doomed,
      Duration delay,
      boolean repeatAfter,
      int pick) {}

  private record Repeat(String queue, long expectedId, InsertOutcome outcome) {}

  /** The group's transaction: its children, the repeats, and its completion unless sealed later. */
  private void writeGroup(GroupLedger.Group g, List<Child> planned) {
    for (int attempt = 1; ; attempt++) {
      Map<GroupLedger.Row, Boolean> rows = new LinkedHashMap<>();
      List<Repeatable> mine = new ArrayList<>();
      List<Repeat> repeats = new ArrayList<>();
      long completionId = -1;
      try (Connection c = shard.pool().getConnection()) {
        c.setAutoCommit(false);
        try {
          for (Child ch : planned) {
            Map<String, Object> cols = new LinkedHashMap<>();
            cols.put("group_key", g.key);
            cols.put("child_no", ch.no());
            cols.put("doomed", ch.doomed() ? 1 : 0);
            EventOptions options =
                ch.delay() == null
                    ? EventOptions.DEFAULTS
                    : EventOptions.builder().delay(ch.delay()).build();
            InsertOutcome o =
                EventProducer.insertUnique(c, ch.queue(), ch.dedupKey(), cols, options);
            if (o.duplicate()) {
              if (attempt == 1) {
                ledger.note("child " + ch.dedupKey() + " came back a duplicate on a first try");
              } else {
                ledger.retryDuplicate();
              }
            }
            rows.put(new GroupLedger.Row(ch.queue(), o.id()), ch.doomed());
            mine.add(new Repeatable(ch.queue(), ch.dedupKey(), o.id()));
            if (ch.repeatAfter()) {
              Repeatable r = pickRepeat(mine, ch.pick());
              Map<String, Object> copy = new LinkedHashMap<>();
              copy.put("group_key", g.key);
              copy.put("child_no", -1);
              copy.put("copy", 1);
              repeats.add(
                  new Repeat(
                      r.queue(),
                      r.id(),
                      EventProducer.insertUnique(c, r.queue(), r.dedupKey(), copy)));
            }
          }
          if (!g.sealedLater) {
            completionId = insertCompletion(c, g, attempt);
          }
          c.commit();
        } catch (SQLException | RuntimeException e) {
          rollbackQuietly(c);
          throw e;
        }
      } catch (SQLException e) {
        if (attempt >= MAX_ATTEMPTS) {
          throw new IllegalStateException("group " + g.key + ": gave up after " + attempt, e);
        }
        ledger.retried();
        pause();
        continue;
      }
      ledger.committed(g, rows);
      for (Repeat r : repeats) {
        ledger.repeated(r.queue(), r.expectedId(), r.outcome().id(), r.outcome().duplicate());
      }
      if (completionId >= 0) {
        ledger.sealed(g, completionId);
      }
      written.addAndGet(rows.size());
      remember(mine);
      cancelDelayed(planned, rows);
      return;
    }
  }

  /** A group sealed later: its completion alone, in a transaction of its own. */
  private void sealAlone(GroupLedger.Group g) {
    try {
      for (int attempt = 1; ; attempt++) {
        try (Connection c = shard.pool().getConnection()) {
          c.setAutoCommit(false);
          try {
            long id = insertCompletion(c, g, attempt);
            c.commit();
            ledger.sealed(g, id);
            return;
          } catch (SQLException | RuntimeException e) {
            rollbackQuietly(c);
            throw e;
          }
        } catch (SQLException e) {
          if (attempt >= MAX_ATTEMPTS) {
            throw new IllegalStateException("group " + g.key + ": seal gave up", e);
          }
          ledger.retried();
          pause();
        }
      }
    } catch (RuntimeException | Error e) {
      failure.compareAndSet(null, e);
    }
  }

  private long insertCompletion(Connection c, GroupLedger.Group g, int attempt)
      throws SQLException {
    Map<String, Object> cols = new LinkedHashMap<>();
    cols.put("completes_group", g.key);
    cols.put("group_size", g.size);
    InsertOutcome o = EventProducer.insertUnique(c, g.completionQueue, g.key + "-done", cols);
    if (o.duplicate()) {
      if (attempt == 1) {
        ledger.note("completion of " + g.key + " came back a duplicate on a first try");
      } else {
        ledger.retryDuplicate();
      }
    }
    return o.id();
  }

  /** A key to repeat: one of this transaction's, or (as often) one of a committed group. */
  private Repeatable pickRepeat(List<Repeatable> mine, int pick) {
    synchronized (committedKeys) {
      if (!committedKeys.isEmpty() && (pick & 1) == 1) {
        return committedKeys.get((pick >>> 1) % committedKeys.size());
      }
    }
    return mine.get((pick >>> 1) % mine.size());
  }

  private void remember(List<Repeatable> mine) {
    synchronized (committedKeys) {
      for (Repeatable r : mine) {
        if (committedKeys.size() < 1000) {
          committedKeys.add(r);
        } else {
          committedKeys.set((int) (r.id() % 1000), r);
        }
      }
    }
  }

  /** Right after the commit, while they are still 2-4 s in the future: the cancel should win. */
  private void cancelDelayed(List<Child> planned, Map<GroupLedger.Row, Boolean> rows) {
    List<GroupLedger.Row> ids = new ArrayList<>(rows.keySet());
    for (int i = 0; i < planned.size(); i++) {
      if (planned.get(i).delay() != null) {
        GroupLedger.Row row = ids.get(i);
        CancelStatus s = cancellers.get(row.queue()).cancel(new EventKey(shard.name(), row.id()));
        ledger.cancelAnswered(row, s);
      }
    }
  }

  private static void pause() {
    try {
      Thread.sleep(250);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while retrying", e);
    }
  }

  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException ignored) {
      // The connection is broken; the pool discards it and the server rolls back.
    }
  }
}
