package dev.sluice.examples.demo;

import dev.sluice.examples.demo.PoisonLedger.Expect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A row whose ack the database refuses for good: a {@code BEFORE UPDATE} trigger signals an error
 * when that one row becomes acked, while 15 others due with it are acked by the same receiver.
 * Contained: the others are acked (the failing ack batch is split until the row is found), the
 * queue's canaries keep flowing, and the row ends dead with the trigger's message as its reason.
 */
final class AckTriggerFault implements Fault {
  private static final String QUEUE = "poison_ack_trigger";
  static final String MESSAGE = "this row refuses its ack";
  private final List<Long> neighbours = new ArrayList<>();
  private long bad;

  @Override
  public String name() {
    return "trigger refuses one row's ack";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    long dueNs = run.tables.nowNs() + Duration.ofMillis(2000).toNanos();
    for (int i = 0; i < 16; i++) {
      if (i == 3) {
        bad = run.add(QUEUE, "ack-refused", null, dueNs, null, Expect.DEAD);
      } else {
        neighbours.add(run.add(QUEUE, "neighbour", null, dueNs, null, Expect.DELIVERED));
      }
    }
    run.tables.execute(
        "CREATE TRIGGER `"
            + QUEUE
            + "_refuse` BEFORE UPDATE ON `"
            + QUEUE
            + "` FOR EACH ROW BEGIN IF NEW.id = "
            + bad
            + " AND NEW.state = "
            + PoisonTables.ACKED
            + " THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '"
            + MESSAGE
            + "'; END IF; END");
    run.note(
        "fault: " + QUEUE + ": a trigger refuses row " + bad + "'s ack; 15 others due with it");
    PoisonRun.awaitDb(
        Duration.ofSeconds(30),
        () -> run.allAcked(QUEUE, neighbours) && run.tables.state(QUEUE, bad) == PoisonTables.DEAD);
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    int state = run.tables.state(QUEUE, bad);
    Optional<String> reason = run.tables.deadReason(QUEUE, bad);
    String notAcked = run.notAcked(QUEUE, neighbours);
    boolean ok =
        state == PoisonTables.DEAD
            && reason.filter(r -> r.contains(MESSAGE)).isPresent()
            && notAcked.isEmpty();
    return Verdict.of(
        ok,
        String.format(
            "row %d: state %d, dead reason %s; 15 neighbours %s",
            bad,
            state,
            reason.map(r -> "'" + r + "'").orElse("none recorded"),
            notAcked.isEmpty() ? "all acked" : "not acked: " + notAcked));
  }
}
