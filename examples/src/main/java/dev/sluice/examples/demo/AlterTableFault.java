package dev.sluice.examples.demo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Fault 6, a served table altered while events are in flight: {@code ALTER TABLE ... ADD COLUMN},
 * then a change of {@code ack_wait} in its comment, while slow handlers hold events — longer than
 * the manager's shutdown timeout (5 s in the demo), so that a queue restarted by the change cannot
 * simply wait for them, and shorter than {@code ack_wait}, so that no timeout redelivers them.
 * Contained: no event delivered twice, no stale ack (the acks of the events in flight apply), all
 * acked.
 */
final class AlterTableFault implements Fault {
  private static final String QUEUE = "poison_alter";
  private static final String COMMENT =
      "sluice_queue ack_wait=30s min_backoff=200ms max_backoff=2s max_attempts=8";
  private static final String NEW_COMMENT =
      "sluice_queue ack_wait=31s min_backoff=200ms max_backoff=2s max_attempts=8";
  private final List<Long> events = new ArrayList<>();
  private long staleBefore;
  private int inFlightAtAlter;

  @Override
  public String name() {
    return "table altered while served";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public String comment() {
    return COMMENT;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    staleBefore = run.receivers.stats(QUEUE).ackStale();
    events.addAll(run.addMany(QUEUE, PoisonReceivers.SLOW, 8));
    PoisonRun.await(Duration.ofSeconds(5), () -> run.receivers.stats(QUEUE).inFlight() >= 4);
    inFlightAtAlter = run.receivers.stats(QUEUE).inFlight();
    run.note(
        "fault 6: "
            + QUEUE
            + ": ALTER TABLE ADD COLUMN, then ack_wait 30s->31s, with "
            + inFlightAtAlter
            + " events in flight");
    run.tables.execute("ALTER TABLE `" + QUEUE + "` ADD COLUMN `note` VARCHAR(16) NULL");
    Thread.sleep(1000);
    run.tables.execute("ALTER TABLE `" + QUEUE + "` COMMENT = '" + NEW_COMMENT + "'");
    PoisonRun.awaitDb(Duration.ofSeconds(15), () -> run.allAcked(QUEUE, events));
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    long dup = run.tally.duplicated(QUEUE);
    long stale = run.receivers.stats(QUEUE).ackStale() - staleBefore;
    String notAcked = run.notAcked(QUEUE, events);
    boolean ok = inFlightAtAlter > 0 && dup == 0 && stale == 0 && notAcked.isEmpty();
    return Verdict.of(
        ok,
        String.format(
            "altered with %d in flight: %d event(s) delivered twice, %d stale ack(s); the %d slow"
                + " events %s",
            inFlightAtAlter,
            dup,
            stale,
            events.size(),
            notAcked.isEmpty() ? "all acked" : "not acked: " + notAcked));
  }
}
