package dev.sluice.examples.demo;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The demo's verdict, computed from what receivers saw ({@link Tally}), what the producer did
 * ({@link Ledger}) and what the table holds at the end — never from Sluice's own counters.
 *
 * @param committed transactions that committed (each added one event)
 * @param cancelled events the Cancel RPC cancelled that the table holds as cancelled (also those
 *     whose answer was lost but the table shows cancelled, never seen by a receiver)
 * @param delivered distinct events a handler completed and the table holds as acked
 * @param dead events the table holds as dead (max_attempts reached)
 * @param rolledBackFired events of rolled-back transactions a receiver saw (must be 0)
 * @param cancelledFired cancelled events a receiver saw (must be 0)
 * @param early handler invocations before the event's due time (must be 0)
 * @param duplicates handler invocations beyond the first per event
 * @param lost committed, uncancelled events neither delivered nor dead (must be 0)
 * @param problems a few lost or wrongly fired events, described for the user
 * @param failover lease hand-overs seen when managers run as processes; null for the core demo
 */
record DemoReport(
    long committed,
    long cancelled,
    long delivered,
    long dead,
    long rolledBackFired,
    long cancelledFired,
    long early,
    long duplicates,
    long lost,
    List<String> problems,
    Failover failover) {

  /**
   * @param failovers times a shard's lease changed owner
   * @param maxGapMs the longest a shard went without a dispatching leader (see {@link LeaseWatch})
   */
  record Failover(long failovers, long maxGapMs) {}

  static final int ACKED = 2;
  static final int DEAD = 3;
  static final int CANCELLED = 4;
  private static final String[] STATE_NAMES = {"pending", "fired", "acked", "dead", "cancelled"};
  private static final int MAX_PROBLEMS = 10;

  /** Call once receivers and manager have stopped, so neither side changes any more. */
  static DemoReport compute(Ledger ledger, Tally tally, DemoDatabase db, Failover failover)
      throws SQLException {
    Map<EventKey, Integer> states = new HashMap<>();
    for (DemoDatabase.Shard shard : db.shards()) {
      states.putAll(states(shard.name(), shard.pool()));
    }
    Map<EventKey, Tally.Seen> seen = tally.snapshot();
    List<String> problems = new ArrayList<>();

    long delivered = 0;
    long rolledBackFired = 0;
    long cancelledFired = 0;
    for (Map.Entry<EventKey, Tally.Seen> e : seen.entrySet()) {
      EventKey eventId = e.getKey();
      Tally.Seen s = e.getValue();
      if (s.handled.get() && state(states, eventId) == ACKED) {
        delivered++;
      }
      if (ledger.isRolledBackOrder(s.orderId)) {
        rolledBackFired++;
        note(problems, "event " + eventId + " of rolled-back order " + s.orderId + " fired");
      }
      if (ledger.isCancelled(eventId)) {
        cancelledFired++;
        note(problems, "cancelled event " + eventId + " fired");
      }
    }

    long cancelled = 0;
    long lost = 0;
    for (Map.Entry<EventKey, Long> e : ledger.committedEvents().entrySet()) {
      EventKey eventId = e.getKey();
      int state = state(states, eventId);
      if (ledger.isCancelled(eventId)) {
        if (state == CANCELLED) {
          cancelled++;
        }
        continue;
      }
      if (state == CANCELLED && ledger.cancelTried(eventId) && !seen.containsKey(eventId)) {
        // The cancel applied but its answer was lost (its manager was killed in between): the
        // table is the truth, and the event never fired.
        cancelled++;
        continue;
      }
      Tally.Seen s = seen.get(eventId);
      boolean ok = s != null && s.handled.get() && state == ACKED;
      if (!ok && state != DEAD) {
        lost++;
        note(problems, describe(eventId, e.getValue(), state, s));
      }
    }

    long dead = states.values().stream().filter(st -> st == DEAD).count();
    return new DemoReport(
        ledger.committedCount(),
        cancelled,
        delivered,
        dead,
        rolledBackFired,
        cancelledFired,
        tally.early(),
        tally.redeliveries(),
        lost,
        List.copyOf(problems),
        failover);
  }

  /** True when Sluice kept every promise: nothing lost, nothing fired that must not, or early. */
  boolean passed() {
    return lost == 0 && rolledBackFired == 0 && cancelledFired == 0 && early == 0;
  }

  String summaryLine() {
    String line = coreLine();
    return failover == null
        ? line
        : line
            + String.format(
                " failovers=%d max_failover_ms=%d", failover.failovers(), failover.maxGapMs());
  }

  private String coreLine() {
    return String.format(
        "demo: committed=%d cancelled=%d delivered=%d dead=%d rolled_back_fired=%d"
            + " cancelled_fired=%d early=%d duplicates=%d lost=%d",
        committed,
        cancelled,
        delivered,
        dead,
        rolledBackFired,
        cancelledFired,
        early,
        duplicates,
        lost);
  }

  /** Details of what went wrong, for stderr. */
  void printProblems(PrintWriter err) {
    for (String p : problems) {
      err.println("demo: " + p);
    }
    long described = problems.size();
    long total = lost + rolledBackFired + cancelledFired;
    if (total > described) {
      err.println("demo: ... and " + (total - described) + " more");
    }
  }

  private static Map<EventKey, Integer> states(String shard, DataSource dataSource)
      throws SQLException {
    Map<EventKey, Integer> out = new HashMap<>();
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id, state FROM " + DemoDatabase.QUEUE)) {
      while (rs.next()) {
        out.put(new EventKey(shard, rs.getLong(1)), rs.getInt(2));
      }
    }
    return out;
  }

  /** The row's state, or -1 when the table has no such row. */
  private static int state(Map<EventKey, Integer> states, EventKey eventId) {
    return states.getOrDefault(eventId, -1);
  }

  private static String describe(EventKey eventId, long orderId, int state, Tally.Seen s) {
    String stateName =
        state >= 0 && state < STATE_NAMES.length ? STATE_NAMES[state] : "missing from the table";
    String sightings =
        s == null
            ? "never seen by a receiver"
            : "seen " + s.deliveries.get() + " times, handled=" + s.handled.get();
    return "lost: event " + eventId + " (order " + orderId + ") is " + stateName + ", " + sightings;
  }

  private static void note(List<String> problems, String problem) {
    if (problems.size() < MAX_PROBLEMS) {
      problems.add(problem);
    }
  }
}
