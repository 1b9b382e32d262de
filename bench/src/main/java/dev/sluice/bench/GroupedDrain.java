package dev.sluice.bench;

import dev.sluice.core.queue.QueueManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * {@code drain --groups}'s grouped peer: the same number of events as children of groups of {@code
 * --group-size}, each group with its completion event in a second queue, drained with both queues'
 * receivers subscribed. Counts the children, clocked to the last completion's ack, and says how
 * long each completion trailed its group's last child ack, by the database's clock.
 */
final class GroupedDrain {
  private final int receivers;
  private final int concurrency;
  private final int maxInFlight;
  private final int poolSize;
  private final int groupSize;

  /** Whether the children's group index is earlier versions' (group_key, state). */
  private final boolean stateIndexed;

  private final CpuMeter cpu;

  /**
   * The last grouped run's lag from a group's last child ack to its completion, by the database's
   * clock, for the summary line ("" before one ran).
   */
  private String completionLagMs = "";

  GroupedDrain(
      int receivers,
      int concurrency,
      int maxInFlight,
      int poolSize,
      int groupSize,
      boolean stateIndexed,
      CpuMeter cpu) {
    this.receivers = receivers;
    this.concurrency = concurrency;
    this.maxInFlight = maxInFlight;
    this.poolSize = poolSize;
    this.groupSize = groupSize;
    this.stateIndexed = stateIndexed;
    this.cpu = cpu;
  }

  /** The summary line's completion lag of the last run ("" before one ran). */
  String completionLagMs() {
    return completionLagMs;
  }

  double run(BenchServer server, ServerStatus status, long n) throws Exception {
    String name = "grouped";
    Database db = server.createDatabase("bench_grouped");
    AtomicLong delivered = new AtomicLong();
    AtomicLong completionsDelivered = new AtomicLong();
    java.util.Queue<Long> completionTimes = new java.util.concurrent.ConcurrentLinkedQueue<>();
    try (SluiceSide s = new SluiceSide(db)) {
      s.createGroupedQueues(stateIndexed);
      QueueManager q = s.startManager(poolSize);
      QueueManager done = s.awaitQueue(SluiceSide.COMPLETIONS);
      s.setPaused(true);
      s.setPaused(SluiceSide.COMPLETIONS, true);
      // When each group's last child was handled (acked right after), and how long after it the
      // group's completion came: the completion's lag.
      java.util.Map<String, Long> lastChild = new java.util.concurrent.ConcurrentHashMap<>();
      java.util.Queue<Long> lags = new java.util.concurrent.ConcurrentLinkedQueue<>();
      s.startHandlers(
          receivers,
          concurrency,
          maxInFlight,
          e -> {
            delivered.incrementAndGet();
            lastChild.merge(e.getString(SluiceSide.GROUP_KEY), System.nanoTime(), Math::max);
          });
      s.startHandlers(
          SluiceSide.COMPLETIONS,
          1,
          concurrency,
          maxInFlight,
          e -> {
            long now = System.nanoTime();
            completionsDelivered.incrementAndGet();
            completionTimes.add(now);
            Long last = lastChild.get(e.getString(SluiceSide.COMPLETES_GROUP));
            if (last != null) {
              lags.add(now - last);
            }
          });
      long[] groupCount = new long[1];
      DrainCommand.load(name, n, p -> groupCount[0] = s.insertGroups(n, groupSize, p));
      long g = groupCount[0];
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: %,d groups of %d with their completions loaded; receivers subscribed, queues"
                  + " paused; resuming",
              name,
              g,
              groupSize));
      Map<String, Long> before = status.read();
      cpu.start();
      long t0 = System.nanoTime();
      s.setPaused(false);
      s.setPaused(SluiceSide.COMPLETIONS, false);
      var ackedChildren = s.counterOf("sluice.events.acked", SluiceSide.QUEUE);
      var ackedCompletions = s.counterOf("sluice.events.acked", SluiceSide.COMPLETIONS);
      long[] childrenDoneNs = {0};
      // Done when every child and every completion is acked; the count is the children's.
      LongSupplier progress =
          () -> {
            long c = (long) ackedChildren.count();
            if (c >= n && childrenDoneNs[0] == 0) {
              childrenDoneNs[0] = System.nanoTime();
            }
            long k = (long) ackedCompletions.count();
            return k >= g ? c : Math.min(c, n - 1);
          };
      double rate =
          DrainCommand.await(
              name,
              n,
              progress,
              t0,
              () -> {
                QueueManager.LiveStats live = q.live();
                return String.format(
                    Locale.ROOT,
                    "delivered=%,d window=%,d in_flight=%,d completions_acked=%,.0f/%,d"
                        + " completions_waiting=%,d",
                    delivered.get(),
                    live.cached(),
                    live.inFlight(),
                    ackedCompletions.count(),
                    g,
                    done.live().cached());
              });
      if (childrenDoneNs[0] > 0) {
        long last = childrenDoneNs[0];
        long after = completionTimes.stream().filter(t -> t > last).count();
        long lastCompletion = completionTimes.stream().mapToLong(Long::longValue).max().orElse(0);
        Progress.note(
            String.format(
                Locale.ROOT,
                "%s: the children alone were all acked %.2f s after the resume (%.0f/s); the"
                    + " completions: %,d deliveries, the first %.2f s after the resume, %,d after"
                    + " the last child's ack, the last %.2f s after it",
                name,
                (last - t0) / 1e9,
                n / ((last - t0) / 1e9),
                completionsDelivered.get(),
                (completionTimes.stream().mapToLong(Long::longValue).min().orElse(t0) - t0) / 1e9,
                after,
                Math.max(0, lastCompletion - last) / 1e9));
      }
      long[] lag = lags.stream().mapToLong(Long::longValue).sorted().toArray();
      if (lag.length > 0) {
        Progress.note(
            String.format(
                Locale.ROOT,
                "%s: a completion's lag after its group's last child was handled: p50=%.0fms"
                    + " p90=%.0fms max=%.0fms (n=%d)",
                name,
                lag[lag.length / 2] / 1e6,
                lag[(int) Math.min(lag.length - 1, Math.ceil(lag.length * 0.9) - 1)] / 1e6,
                lag[lag.length - 1] / 1e6,
                lag.length));
      }
      noteGroupTimes(name, db);
      DrainCommand.report(cpu, name, ServerStatus.Delta.between(before, status.read()), n);
      s.stopReceivers();
      return rate;
    } finally {
      server.drop(db);
    }
  }

  /**
   * Where a completion's lag goes, by the database's clock: from its group's last child ack ({@code
   * time_acked}) to the group's completion ({@code sluice_group.completed_ns}, the leader's check),
   * and from there to the completion event's own ack (its poll, delivery and ack).
   */
  private void noteGroupTimes(String name, Database db) throws java.sql.SQLException {
    List<Long> close = new ArrayList<>();
    List<Long> deliver = new ArrayList<>();
    try (java.sql.Connection c = db.connect();
        java.sql.Statement st = c.createStatement();
        java.sql.ResultSet rs =
            st.executeQuery(
                "SELECT g.completed_ns - MAX(e.time_acked), MAX(d.time_acked) - g.completed_ns"
                    + " FROM sluice_group g JOIN "
                    + SluiceSide.QUEUE
                    + " e ON e."
                    + SluiceSide.GROUP_KEY
                    + " = g.group_key JOIN "
                    + SluiceSide.COMPLETIONS
                    + " d ON d.id = g.completion_id"
                    + " WHERE g.completed_ns IS NOT NULL GROUP BY g.group_key")) {
      while (rs.next()) {
        close.add(rs.getLong(1));
        deliver.add(rs.getLong(2));
      }
    }
    long[] lag = close.stream().mapToLong(Long::longValue).sorted().toArray();
    if (lag.length > 0) {
      completionLagMs =
          String.format(
              Locale.ROOT,
              " completion_lag_p50_ms=%.0f completion_lag_p99_ms=%.0f",
              lag[lag.length / 2] / 1e6,
              lag[(int) Math.min(lag.length - 1, Math.ceil(lag.length * 0.99) - 1)] / 1e6);
    }
    Progress.note(
        String.format(
            Locale.ROOT,
            "%s: by the database's clock, last child's ack to the group's completion: %s; to the"
                + " completion event's ack: %s",
            name,
            spread(close),
            spread(deliver)));
  }

  private static String spread(List<Long> ns) {
    long[] v = ns.stream().mapToLong(Long::longValue).sorted().toArray();
    if (v.length == 0) {
      return "none";
    }
    return String.format(
        Locale.ROOT,
        "p50=%.0fms p90=%.0fms max=%.0fms",
        v[v.length / 2] / 1e6,
        v[(int) Math.min(v.length - 1, Math.ceil(v.length * 0.9) - 1)] / 1e6,
        v[v.length - 1] / 1e6);
  }
}
