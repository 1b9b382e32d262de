package dev.sluice.examples.demo;

import dev.sluice.examples.demo.PoisonLedger.Expect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Fault 2, an {@code epoch} at its column's maximum (the poison tables' {@code epoch} is an INT):
 * the fire's {@code epoch = epoch + 1} cannot be written. Contained: the row ends dead with a
 * reason Sluice recorded ({@code sluice_dead_reason}); its neighbours, due with it, are delivered.
 */
final class MaxEpochFault implements Fault {
  private static final String QUEUE = "poison_epoch";
  private static final long MAX_INT = Integer.MAX_VALUE;
  private final List<Long> neighbours = new ArrayList<>();
  private long bad;

  @Override
  public String name() {
    return "maximal epoch";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    run.note("fault 2: " + QUEUE + ": a row with epoch=" + MAX_INT + " among 8 neighbours");
    neighbours.addAll(run.addMany(QUEUE, "neighbour", 4));
    bad = run.add(QUEUE, "max-epoch", null, null, MAX_INT, Expect.DEAD);
    neighbours.addAll(run.addMany(QUEUE, "neighbour", 4));
    PoisonRun.awaitDb(
        Duration.ofSeconds(5),
        () -> run.allAcked(QUEUE, neighbours) && run.tables.state(QUEUE, bad) == PoisonTables.DEAD);
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    int state = run.tables.state(QUEUE, bad);
    Optional<String> reason = run.tables.deadReason(QUEUE, bad);
    String notAcked = run.notAcked(QUEUE, neighbours);
    boolean ok = state == PoisonTables.DEAD && reason.isPresent() && notAcked.isEmpty();
    return Verdict.of(
        ok,
        String.format(
            "row %d with epoch=%d: state %d, dead reason %s, delivered %d time(s); neighbours %s",
            bad,
            MAX_INT,
            state,
            reason.map(r -> "'" + r + "'").orElse("none recorded"),
            run.tally.deliveries(QUEUE, bad),
            notAcked.isEmpty() ? "all acked" : "not acked: " + notAcked));
  }
}
