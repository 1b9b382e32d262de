package dev.sluice.examples.demo;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The checker of {@code sluice demo --groups}, at the end, from what the producer committed ({@link
 * GroupLedger}), what the handlers saw ({@link GroupReceivers}) and what the tables hold: the
 * children's and completions' final states, the completion handlings recorded in {@code
 * group_outcomes} (one row per handling that committed with its transactional ack) and the
 * recurring event's rows in {@code tick_events}.
 *
 * <ul>
 *   <li>{@code groups}: groups committed (children and completion, sealed in the same transaction
 *       or later).
 *   <li>{@code completed_once}: groups whose completion was handled successfully exactly once.
 *   <li>{@code early_completions}: completions whose handling saw a child of the group still
 *       pending or fired (with {@code fail_fast}: and none dead).
 *   <li>{@code lost}: committed children not acked, dead or cancelled at the end, or acked although
 *       no handler returned normally for them; completions never handled successfully.
 *   <li>{@code duplicates_inserted}: deliberate repeats of a dedup key that came back duplicates;
 *       {@code duplicates_delivered}: repeats that got in as rows, or were delivered.
 *   <li>Not on the line, but failing the run too: a completion whose counts ({@code event.group()})
 *       differ from the children's states (see {@link #checkCounts}), and a duplicate that came
 *       back with another event's id.
 *   <li>{@code occurrences_missing}, {@code occurrences_doubled}: the recurring event's occurrences
 *       (every second, on the grid from its first) from the first to the last one due before the
 *       schedule was paused, without a row, or with more than one.
 * </ul>
 */
final class GroupReport {
  static final int PENDING = 0;
  static final int FIRED = 1;
  static final int ACKED = 2;
  static final int DEAD = 3;
  static final int CANCELLED = 4;

  long groups;
  long completedOnce;
  long earlyCompletions;
  long lost;
  long duplicatesInserted;
  long duplicatesDelivered;
  long occurrencesMissing;
  long occurrencesDoubled;

  long occurrences;
  long doubleHandled;
  long childrenDead;
  long childrenCancelled;
  long childrenAcked;
  long offGrid;
  long wrongIds;
  long countsWrong;
  final List<String> problems = new ArrayList<>();

  String summaryLine() {
    return String.format(
        "demo: groups=%d completed_once=%d early_completions=%d lost=%d duplicates_inserted=%d"
            + " duplicates_delivered=%d occurrences_missing=%d occurrences_doubled=%d",
        groups,
        completedOnce,
        earlyCompletions,
        lost,
        duplicatesInserted,
        duplicatesDelivered,
        occurrencesMissing,
        occurrencesDoubled);
  }

  boolean passed() {
    return earlyCompletions == 0
        && lost == 0
        && duplicatesDelivered == 0
        && occurrencesMissing == 0
        && occurrencesDoubled == 0
        && completedOnce == groups
        && wrongIds == 0
        && countsWrong == 0;
  }

  void printProblems(PrintWriter err) {
    for (String p : problems) {
      err.println("demo: problem: " + p);
    }
    err.flush();
  }

  private void problem(String p) {
    if (problems.size() < 40) {
      problems.add(p);
    }
  }

  /** One row of a queue, as the table holds it at the end. */
  private record Final(int state, String key, int copy) {}

  /**
   * @param everyNs the schedule's interval: its occurrences lie on a grid from the first one
   * @param tickUntilNs the last occurrence expected is the last on the grid at or before this
   */
  static GroupReport compute(
      GroupLedger ledger,
      GroupReceivers receivers,
      DemoDatabase.Shard shard,
      long everyNs,
      long tickUntilNs)
      throws SQLException {
    GroupReport r = new GroupReport();
    try (Connection c = shard.pool().getConnection()) {
      Map<GroupLedger.Row, Final> rows = new HashMap<>();
      for (String q : GroupProducer.CHILD_QUEUES) {
        read(c, q, "group_key", "copy", rows);
      }
      for (String q : GroupProducer.COMPLETION_QUEUES) {
        read(c, q, "completes_group", "copy", rows);
      }
      r.groups = ledger.groupCount();

      // Children.
      for (Map.Entry<GroupLedger.Row, String> e : ledger.children().entrySet()) {
        GroupLedger.Row row = e.getKey();
        Final f = rows.get(row);
        if (f == null) {
          r.lost++;
          r.problem("child " + row + " of group " + e.getValue() + " is not in its table");
          continue;
        }
        switch (f.state()) {
          case ACKED -> {
            r.childrenAcked++;
            if (!receivers.handledChildren().contains(row)) {
              r.lost++;
              r.problem(
                  "child "
                      + row
                      + " of group "
                      + e.getValue()
                      + " is acked but no handler returned for it"
                      + (ledger.doomed(row) ? " (a doomed child: its handler always throws)" : ""));
            }
          }
          case DEAD -> r.childrenDead++;
          case CANCELLED -> {
            // Whatever its cancel was answered: a call cut by a killed manager may have applied,
            // and the retry on the other is then answered "not pending" (already cancelled).
            r.childrenCancelled++;
          }
          default -> {
            r.lost++;
            r.problem(
                "child "
                    + row
                    + " of group "
                    + e.getValue()
                    + " ended in state "
                    + f.state()
                    + " (pending or fired)");
          }
        }
      }

      // Completions and their handlings.
      Map<GroupLedger.Row, List<Outcome>> outcomes = outcomes(c);
      Map<String, Long> childCount = new HashMap<>();
      ledger.children().values().forEach(k -> childCount.merge(k, 1L, Long::sum));
      for (GroupLedger.Group g : ledger.groups().values()) {
        if (g.completionId < 0) {
          r.lost++;
          r.problem("group " + g.key + " was never sealed (its completion did not commit)");
          continue;
        }
        GroupLedger.Row row = new GroupLedger.Row(g.completionQueue, g.completionId);
        List<Outcome> seen = outcomes.getOrDefault(row, List.of());
        Final f = rows.get(row);
        if (seen.isEmpty()) {
          r.lost++;
          r.problem(
              "the completion "
                  + row
                  + " of group "
                  + g.key
                  + " (size "
                  + g.size
                  + ") was never handled; it ended "
                  + (f == null ? "missing from its table" : "in state " + f.state()));
          continue;
        }
        if (seen.size() == 1) {
          r.completedOnce++;
        } else {
          r.doubleHandled++;
          r.problem(
              "the completion "
                  + row
                  + " of group "
                  + g.key
                  + " was handled "
                  + seen.size()
                  + " times");
        }
        if (seen.stream().anyMatch(Outcome::early)) {
          r.earlyCompletions++;
          Outcome o = seen.stream().filter(Outcome::early).findFirst().orElseThrow();
          r.problem(
              String.format(
                  "early completion %s of group %s (%s): handled while %d children were pending or"
                      + " fired (acked=%d dead=%d cancelled=%d), by %s at attempt %d",
                  row,
                  g.key,
                  g.completionQueue.equals(GroupProducer.FAIL_FAST) ? "fail_fast" : "wait_all",
                  o.open(),
                  o.acked(),
                  o.dead(),
                  o.cancelled(),
                  o.receiver(),
                  o.attempt()));
        }
        r.checkCounts(row, g, seen, childCount.getOrDefault(g.key, 0L));
        if (!g.completionQueue.equals(GroupProducer.FAIL_FAST)) {
          Outcome o = seen.get(0);
          long children = childCount.getOrDefault(g.key, 0L);
          if (!o.early() && o.acked() + o.dead() + o.cancelled() != children) {
            r.problem(
                String.format(
                    "completion %s of group %s saw %d finished children; the group has %d",
                    row, g.key, o.acked() + o.dead() + o.cancelled(), children));
          }
        }
      }

      // Deduplication.
      r.duplicatesInserted = ledger.duplicatesInserted();
      r.wrongIds = ledger.duplicatesWrongId();
      Set<GroupLedger.Row> copies = new HashSet<>(receivers.copiesDelivered());
      copies.addAll(ledger.copiesInserted());
      rows.forEach(
          (row, f) -> {
            if (f.copy() == 1) {
              copies.add(row);
            }
          });
      r.duplicatesDelivered = copies.size();
      for (GroupLedger.Row row : copies) {
        r.problem("a repeated dedup key got in as " + row);
      }
      ledger.problems().forEach(r::problem);

      // The recurring event.
      r.occurrences(c, everyNs, tickUntilNs);
    }
    return r;
  }

  /**
   * The counts the completion carried ({@code event.group()}) against the children's states the
   * handler read: with wait_all every child was settled, so they are equal; with fail_fast they
   * were counted when the first child died (or all settled), so none is above what was read later,
   * and either one is dead or all are counted.
   */
  private void checkCounts(
      GroupLedger.Row row, GroupLedger.Group g, List<Outcome> seen, long size) {
    boolean failFast = g.completionQueue.equals(GroupProducer.FAIL_FAST);
    for (Outcome o : seen) {
      String wrong = null;
      long total = o.reportedAcked() + o.reportedDead() + o.reportedCancelled();
      if (!o.reported()) {
        wrong = "carried no counts (event.group() empty)";
      } else if (!g.key.equals(o.reportedKey())) {
        wrong = "carried the key " + o.reportedKey();
      } else if (!failFast
          && (o.reportedAcked() != o.acked()
              || o.reportedDead() != o.dead()
              || o.reportedCancelled() != o.cancelled())) {
        wrong = "carried counts that differ from the children's states";
      } else if (failFast
          && (o.reportedAcked() > o.acked()
              || o.reportedDead() > o.dead()
              || o.reportedCancelled() > o.cancelled()
              || (o.reportedDead() == 0 && total != size))) {
        wrong = "carried counts that the children's states do not bear out";
      }
      if (wrong != null) {
        countsWrong++;
        problem(
            String.format(
                "completion %s of group %s (%s, %d children) %s: carried acked=%d dead=%d"
                    + " cancelled=%d; read at its handling acked=%d dead=%d cancelled=%d open=%d",
                row,
                g.key,
                failFast ? "fail_fast" : "wait_all",
                size,
                wrong,
                o.reportedAcked(),
                o.reportedDead(),
                o.reportedCancelled(),
                o.acked(),
                o.dead(),
                o.cancelled(),
                o.open()));
      }
    }
  }

  private void occurrences(Connection c, long everyNs, long untilNs) throws SQLException {
    TreeMap<Long, Integer> byTime = new TreeMap<>();
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT occurrence_ns, COUNT(*) FROM "
                    + GroupsRun.TICKS
                    + " GROUP BY occurrence_ns")) {
      while (rs.next()) {
        byTime.put(rs.getLong(1), rs.getInt(2));
      }
    }
    if (byTime.isEmpty()) {
      occurrencesMissing = 1;
      problem("the schedule inserted no occurrence at all");
      return;
    }
    long first = byTime.firstKey();
    long last = first + Math.floorDiv(untilNs - first, everyNs) * everyNs;
    for (Map.Entry<Long, Integer> e : byTime.entrySet()) {
      occurrences += e.getValue();
      if (e.getValue() > 1) {
        occurrencesDoubled += e.getValue() - 1;
        problem("occurrence at " + e.getKey() + " ns has " + e.getValue() + " rows");
      }
      if ((e.getKey() - first) % everyNs != 0) {
        offGrid++;
        problem("occurrence at " + e.getKey() + " ns is off the grid of its first, " + first);
      }
    }
    for (long t = first; t <= last; t += everyNs) {
      if (!byTime.containsKey(t)) {
        occurrencesMissing++;
        if (occurrencesMissing <= 5) {
          problem("no occurrence at " + t + " ns (" + (t - first) / everyNs + " after the first)");
        }
      }
    }
  }

  private static void read(
      Connection c,
      String queue,
      String keyColumn,
      String copyColumn,
      Map<GroupLedger.Row, Final> into)
      throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT id, state, " + keyColumn + ", " + copyColumn + " FROM `" + queue + "`")) {
      while (rs.next()) {
        into.put(
            new GroupLedger.Row(queue, rs.getLong(1)),
            new Final(rs.getInt(2), rs.getString(3), rs.getInt(4)));
      }
    }
  }

  private record Outcome(
      long open,
      long acked,
      long dead,
      long cancelled,
      boolean early,
      String receiver,
      long attempt,
      boolean reported,
      String reportedKey,
      long reportedAcked,
      long reportedDead,
      long reportedCancelled) {}

  private static Map<GroupLedger.Row, List<Outcome>> outcomes(Connection c) throws SQLException {
    Map<GroupLedger.Row, List<Outcome>> m = new HashMap<>();
    try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT completion_queue, completion_id, open_children, acked, dead, cancelled,"
                    + " early, receiver, attempt, reported, reported_key, reported_acked,"
                    + " reported_dead, reported_cancelled FROM group_outcomes ORDER BY id");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        m.computeIfAbsent(
                new GroupLedger.Row(rs.getString(1), rs.getLong(2)), k -> new ArrayList<>())
            .add(
                new Outcome(
                    rs.getLong(3),
                    rs.getLong(4),
                    rs.getLong(5),
                    rs.getLong(6),
                    rs.getInt(7) == 1,
                    rs.getString(8),
                    rs.getLong(9),
                    rs.getInt(10) == 1,
                    rs.getString(11),
                    rs.getLong(12),
                    rs.getLong(13),
                    rs.getLong(14)));
      }
    }
    return m;
  }
}
