package dev.sluice.examples.demo;

import dev.sluice.examples.demo.PoisonLedger.Expect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Fault 3, an oversized payload: a 5 MiB event (the default {@code max_event_bytes} is about 1 MiB,
 * gRPC's default message limit 4 MiB) among small neighbours. Contained: it ends dead with "too
 * large: N bytes > limit"; the neighbours and the queue's later events are delivered.
 */
final class OversizedFault implements Fault {
  private static final String QUEUE = "poison_large";
  static final int SIZE = 5 * 1024 * 1024;
  private final List<Long> neighbours = new ArrayList<>();
  private long big = -1;
  private String failure;

  @Override
  public String name() {
    return "oversized payload";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    run.note("fault 3: " + QUEUE + ": a " + SIZE + "-byte payload among 8 neighbours");
    neighbours.addAll(run.addMany(QUEUE, "neighbour", 4));
    try {
      big = run.add(QUEUE, "too-large", new byte[SIZE], null, null, Expect.DEAD);
    } catch (java.sql.SQLException e) {
      failure = e.getMessage();
    }
    neighbours.addAll(run.addMany(QUEUE, "neighbour", 4));
    PoisonRun.awaitDb(
        Duration.ofSeconds(5),
        () -> run.allAcked(QUEUE, neighbours) && run.tables.state(QUEUE, big) == PoisonTables.DEAD);
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    if (failure != null) {
      return Verdict.of(false, "not injected: the insert failed: " + failure);
    }
    int state = run.tables.state(QUEUE, big);
    Optional<String> reason = run.tables.deadReason(QUEUE, big);
    String notAcked = run.notAcked(QUEUE, neighbours);
    boolean ok =
        state == PoisonTables.DEAD
            && reason.filter(r -> r.contains("too large")).isPresent()
            && notAcked.isEmpty();
    return Verdict.of(
        ok,
        String.format(
            "row %d of %d bytes: state %d, dead reason %s, handler ran %d time(s); receiver"
                + " reconnects %d; neighbours %s",
            big,
            SIZE,
            state,
            reason.map(r -> "'" + r + "'").orElse("none recorded"),
            run.tally.deliveries(QUEUE, big),
            run.receivers.stats(QUEUE).reconnects(),
            notAcked.isEmpty() ? "all acked" : "not acked: " + notAcked));
  }
}
