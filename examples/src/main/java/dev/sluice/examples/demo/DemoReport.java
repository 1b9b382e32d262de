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
 * @param ordering what the {@link OrderChecker} saw, with --ordered; null otherwise
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
    Failover failover,
    Ordering ordering) {

  /**
   * @param failovers times a shard's lease changed owner
   * @param maxGapMs the longest a shard went without a dispatching leader (see {@link LeaseWatch})
   */
  record Failover(long failovers, long maxGapMs) {}

  /**
   * @param keys keys whose events receivers saw
   * @param violations deliveries breaking the order (see {@link OrderChecker}; must be 0)
   * @param maxInFlightPerKey the most events of one key in handlers at once (must be 1)
   * @param details the violations and the events left unfinished, with their keys, for the user
   * @param turns how long a key's next event, already due, waited after the one before it was
   *     handled ({@link OrderChecker#turnLatencies}); null if none did
   */
  record Ordering(
      long keys, long violations, int maxInFlightPerKey, List<String> details, String turns) {}

  static final int ACKED = 2;
  static final int DEAD = 3;
  static final int CANCELLED = 4;
  private static final String[] STATE_NAMES = {"pending", "fired", "acked", "dead", "cancelled"};
  private static final int MAX_PROBLEMS = 10;

  /** Call once receivers and manager have stopped, so neither side changes any more. */
  static DemoReport compute(Ledger ledger, Tally tally, DemoDatabase db, Failover failover)
      throws SQLException {
    return compute(ledger, tally, db, failover, null);
  }

  /**
   * @param checker the order checker of an --ordered run, or null
   */
  static DemoReport compute(
      Ledger ledger, Tally tally, DemoDatabase db, Failover failover, OrderChecker checker)
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
        failover,
        checker == null ? null : ordering(checker, tally, db));
  }

  /**
   * The checker's verdict, with the events still pending or fired and the dead ones (with why), and
   * where their keys stand.
   */
  private static Ordering ordering(OrderChecker checker, Tally tally, DemoDatabase db)
      throws SQLException {
    List<String> details = new ArrayList<>(checker.examples());
    for (DemoDatabase.Shard shard : db.shards()) {
      try (Connection c = shard.pool().getConnection();
          Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT id, "
                      + OrderChecker.KEY_COLUMN
                      + ", "
                      + OrderChecker.SEQ_COLUMN
                      + ", state, epoch, time_next FROM "
                      + DemoDatabase.QUEUE
                      + " WHERE state IN (0, 1) ORDER BY "
                      + OrderChecker.KEY_COLUMN
                      + ", id LIMIT "
                      + MAX_PROBLEMS)) {
        while (rs.next()) {
          long timeNext = rs.getLong(6);
          String key = rs.getString(2);
          details.add(
              String.format(
                  "unfinished: queue %s shard %s id %d %s #%d is %s, epoch %d, time_next %d%s;"
                      + " %s",
                  DemoDatabase.QUEUE,
                  shard.name(),
                  rs.getLong(1),
                  key,
                  rs.getLong(3),
                  STATE_NAMES[rs.getInt(4)],
                  rs.getInt(5),
                  timeNext,
                  timeNext >= dev.sluice.db.QueueConvention.HELD_NS ? " (held)" : "",
                  checker.describe(key)));
        }
      }
    }
    for (DemoDatabase.Shard shard : db.shards()) {
      try (Connection c = shard.pool().getConnection();
          Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT e.id, e."
                      + OrderChecker.KEY_COLUMN
                      + ", e."
                      + OrderChecker.SEQ_COLUMN
                      + ", e.epoch, r.reason FROM "
                      + DemoDatabase.QUEUE
                      + " e LEFT JOIN sluice_dead_reason r ON r.queue = '"
                      + DemoDatabase.QUEUE
                      + "' AND r.id = e.id WHERE e.state = "
                      + DEAD
                      + " ORDER BY e.id LIMIT "
                      + MAX_PROBLEMS)) {
        while (rs.next()) {
          Tally.Seen seen = tally.get(new EventKey(shard.name(), rs.getLong(1)));
          details.add(
              String.format(
                  "dead: queue %s shard %s id %d %s #%d, epoch %d, seen %d times: %s; %s",
                  DemoDatabase.QUEUE,
                  shard.name(),
                  rs.getLong(1),
                  rs.getString(2),
                  rs.getLong(3),
                  rs.getLong(4),
                  seen == null ? 0 : seen.deliveries.get(),
                  rs.getString(5),
                  checker.describe(rs.getString(2))));
        }
      }
    }
    return new Ordering(
        checker.keys(),
        checker.violations(),
        checker.maxInFlightPerKey(),
        List.copyOf(details),
        checker.turnLatencies());
  }

  /** True when Sluice kept every promise: nothing lost, nothing fired that must not, or early. */
  boolean passed() {
    return lost == 0
        && rolledBackFired == 0
        && cancelledFired == 0
        && early == 0
        && (ordering == null || (ordering.violations() == 0 && ordering.maxInFlightPerKey() <= 1));
  }

  String summaryLine() {
    String line = coreLine();
    if (ordering != null) {
      line +=
          String.format(
              " keys=%d order_violations=%d max_in_flight_per_key=%d",
              ordering.keys(), ordering.violations(), ordering.maxInFlightPerKey());
    }
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
    if (ordering != null) {
      if (ordering.turns() != null) {
        err.println(
            "demo: ordered: from a handler's return to its key's next event (already due) in a"
                + " handler: "
                + ordering.turns());
      }
      for (String d : ordering.details()) {
        err.println("demo: " + d);
      }
      if (ordering.violations() > 0) {
        err.println(
            "demo: " + ordering.violations() + " order violations in all (the first few above)");
      }
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
