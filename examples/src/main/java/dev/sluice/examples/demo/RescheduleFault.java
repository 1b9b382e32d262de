package dev.sluice.examples.demo;

import dev.sluice.examples.demo.PoisonLedger.Expect;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Fault 4, a pending row rescheduled while in the manager's window (the Vitess idiom: {@code UPDATE
 * q SET time_next = <later>, payload = <new> WHERE id = ? AND state = 0}). The queue's receiver is
 * started only after the update, so the row sits due and read in the window, unsent, when it
 * changes. Contained: it is delivered not before its new time, with its new columns.
 */
final class RescheduleFault implements Fault {
  private static final String QUEUE = "poison_resched";
  static final String OLD = "resched-old";
  static final String NEW = "resched-new";
  private static final Duration LATER = Duration.ofSeconds(4);
  private final List<Long> neighbours = new ArrayList<>();
  private long row;
  private long newDueNs;
  private int updated;

  @Override
  public String name() {
    return "reschedule of a pending row";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public boolean receiverUpFront() {
    return false;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    run.note(
        "fault 4: "
            + QUEUE
            + ": a due row read into the window (no receiver yet), then UPDATE time_next=+"
            + LATER.toSeconds()
            + "s, new payload");
    neighbours.addAll(run.addMany(QUEUE, "neighbour", 3));
    row = run.add(QUEUE, OLD, "old".getBytes(StandardCharsets.UTF_8), null, null, Expect.DELIVERED);
    neighbours.addAll(run.addMany(QUEUE, "neighbour", 3));
    Thread.sleep(1500); // several polls: the row is in the window by now
    newDueNs = run.tables.nowNs() + LATER.toNanos();
    updated =
        run.tables.execute(
            "UPDATE `"
                + QUEUE
                + "` SET time_next = ?, label = ?, payload = ? WHERE id = ? AND state = 0",
            newDueNs,
            NEW,
            "new".getBytes(StandardCharsets.UTF_8),
            row);
    run.ledger.added(QUEUE, row, Expect.DELIVERED, newDueNs);
    run.serve(QUEUE, Duration.ofSeconds(10));
    PoisonRun.awaitDb(
        LATER.plusSeconds(3),
        () ->
            run.allAcked(QUEUE, neighbours) && run.tables.state(QUEUE, row) == PoisonTables.ACKED);
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    if (updated != 1) {
      return Verdict.of(
          false,
          "not injected: row "
              + row
              + " was no longer pending when rescheduled (state "
              + run.tables.state(QUEUE, row)
              + ")");
    }
    List<PoisonTally.Sighting> seen = run.tally.of(QUEUE, row);
    String notAcked = run.notAcked(QUEUE, neighbours);
    if (seen.isEmpty()) {
      return Verdict.of(false, "row " + row + " rescheduled but never delivered");
    }
    PoisonTally.Sighting first = seen.get(0);
    long earlyMs = (newDueNs - first.seenNs()) / 1_000_000;
    boolean ok = first.label().equals(NEW) && first.seenNs() >= newDueNs && notAcked.isEmpty();
    return Verdict.of(
        ok,
        String.format(
            "row %d rescheduled %d s ahead: first delivered %s its new time, with label '%s'"
                + " (%d delivery(ies)); neighbours %s",
            row,
            LATER.toSeconds(),
            earlyMs > 0 ? earlyMs + " ms BEFORE" : (-earlyMs) + " ms after",
            first.label(),
            seen.size(),
            notAcked.isEmpty() ? "all acked" : "not acked: " + notAcked));
  }
}
