package dev.sluice.examples.demo;

import dev.sluice.examples.demo.PoisonLedger.Expect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Fault 1, a row with an unknown state: while an event is in flight its row is set to {@code state
 * = 9} by hand (the receiver's handler does it, then returns, so the receiver acks it), among
 * neighbours fired and acked with it. Contained: the bad row is skipped and counted ({@code
 * sluice_bad_rows_total}) and not delivered again; the neighbours' acks apply; the queue goes on.
 */
final class UnknownStateFault implements Fault {
  private static final String QUEUE = "poison_state";
  private final List<Long> neighbours = new ArrayList<>();
  private long bad;
  private long badRowsBefore;
  private long injectedNs;
  private boolean seen;

  @Override
  public String name() {
    return "unknown state";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    badRowsBefore = Math.max(0, run.badRows(QUEUE));
    run.note("fault 1: " + QUEUE + ": UPDATE state=9 on an event in flight, among 10 neighbours");
    injectedNs = System.nanoTime();
    neighbours.addAll(run.addMany(QUEUE, "neighbour", 5));
    bad = run.add(QUEUE, PoisonReceivers.SET_UNKNOWN_STATE, Expect.SKIPPED);
    neighbours.addAll(run.addMany(QUEUE, "neighbour", 5));
    seen = PoisonRun.await(Duration.ofSeconds(10), () -> run.tally.deliveries(QUEUE, bad) > 0);
    PoisonRun.awaitDb(Duration.ofSeconds(5), () -> run.allAcked(QUEUE, neighbours));
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    if (!seen) {
      return Verdict.of(false, "not injected: event " + bad + " was never delivered");
    }
    int deliveries = run.tally.deliveries(QUEUE, bad);
    long counted = run.badRows(QUEUE);
    String notAcked = run.notAcked(QUEUE, neighbours);
    boolean goesOn = run.canaries.ackedSince(QUEUE, injectedNs);
    String seenText =
        String.format(
            "row %d set to state 9 in flight: delivered %d time(s), state now %d, %s; neighbours %s;"
                + " canaries after it %s",
            bad,
            deliveries,
            run.tables.state(QUEUE, bad),
            counted < 0
                ? "no sluice_bad_rows_total metric"
                : "sluice_bad_rows_total +" + (counted - badRowsBefore),
            notAcked.isEmpty() ? "all acked" : "not acked: " + notAcked,
            goesOn ? "acked" : "NOT acked");
    boolean ok = deliveries == 1 && counted - badRowsBefore >= 1 && notAcked.isEmpty() && goesOn;
    return Verdict.of(ok, seenText);
  }
}
