package dev.sluice.examples.demo;

import java.time.Duration;
import java.util.Optional;

/**
 * Fault 5, a malformed comment on another table ({@code ack_wait=999999999999999d}, which overflows
 * a duration), then a new, valid queue created after it. Contained: the bad table is reported and
 * not served; the new queue is served within seconds (as are all others, per their canaries). The
 * bad table is dropped after the verdict so that it cannot blur the later faults.
 */
final class MalformedCommentFault implements Fault {
  static final String BAD = "poison_malformed";
  static final String LATE = "poison_late";
  static final String COMMENT = "sluice_queue ack_wait=999999999999999d";
  private static final Duration SERVE_WITHIN = Duration.ofSeconds(10);
  private Optional<String> problem = Optional.empty();
  private boolean served;
  private boolean lateServed;
  private long lateMs;

  @Override
  public String name() {
    return "malformed comment";
  }

  @Override
  public String queue() {
    return null;
  }

  @Override
  public String watchedQueue() {
    return LATE;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    run.note("fault 5: CREATE TABLE " + BAD + " COMMENT='" + COMMENT + "', then " + LATE);
    run.tables.create(BAD, COMMENT);
    run.tables.insert(BAD, "never-served", null, null, null); // dropped with its table
    Thread.sleep(2500); // two discovery rounds: the bad table is known by now
    run.tables.create(LATE, PoisonTables.COMMENT);
    long t0 = System.nanoTime();
    run.serve(LATE, Duration.ZERO);
    lateServed =
        PoisonRun.await(
            SERVE_WITHIN,
            () -> run.canaries.ackedSince(LATE, t0) || !run.tally.queue(LATE).isEmpty());
    lateMs = (System.nanoTime() - t0) / 1_000_000;
    problem = run.manager.engine().problem(BAD);
    served = run.manager.engine().find(BAD).isPresent();
    run.tables.execute("DROP TABLE `" + BAD + "`");
    run.note("fault 5: dropped " + BAD);
  }

  @Override
  public Verdict judge(PoisonRun run) {
    boolean ok = problem.isPresent() && !served && lateServed;
    return Verdict.of(
        ok,
        String.format(
            "%s %s%s; %s created after it %s",
            BAD,
            served ? "SERVED" : "not served",
            problem.map(p -> ", reported: " + p).orElse(", NOT reported"),
            LATE,
            lateServed
                ? "served within " + lateMs + " ms"
                : "NOT served within " + SERVE_WITHIN.toSeconds() + " s"));
  }
}
