package dev.sluice.examples.demo;

import dev.sluice.core.shard.ShardManager;
import dev.sluice.examples.demo.PoisonLedger.Expect;
import dev.sluice.manager.SluiceServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Fault 8, a duplicate {@code manager_id}: a second in-process manager with the demo manager's
 * config (same id, same shard; free ports) runs for {@link #WATCH} while events flow. Contained: it
 * refuses to lead (it never leads the shard, or it refuses to start); the two never lead at the
 * same moment; the lease's fencing token does not change; no event of the queue fires twice.
 */
final class DuplicateManagerFault implements Fault {
  private static final String QUEUE = "poison_dup";
  static final Duration WATCH = Duration.ofSeconds(8);
  private final List<Long> events = new ArrayList<>();
  private String refused;
  private int samples;
  private int bothLed;
  private int secondLed;
  private int tokenChanges;

  @Override
  public String name() {
    return "duplicate manager_id";
  }

  @Override
  public String queue() {
    return QUEUE;
  }

  @Override
  public void inject(PoisonRun run) throws Exception {
    String shard = run.config.shards().get(0).name();
    run.note(
        "fault 8: a second manager with manager_id "
            + run.config.managerId()
            + " for "
            + WATCH.toSeconds()
            + " s");
    SluiceServer second = new SluiceServer(run.config, run.clock, new SimpleMeterRegistry());
    try {
      try {
        second.start();
      } catch (RuntimeException e) {
        refused = String.valueOf(e.getMessage());
      }
      if (refused == null) {
        // Receivers reach every manager they know: a second leader would find them too.
        run.receivers.start(
            QUEUE, "127.0.0.1:" + second.port(), "poison-dup-second", Duration.ZERO);
      }
      long token = token(run, shard);
      long end = System.nanoTime() + WATCH.toNanos();
      long nextInsert = 0;
      while (System.nanoTime() < end) {
        boolean a = leads(run.manager, shard);
        boolean b = refused == null && leads(second, shard);
        samples++;
        if (a && b) {
          bothLed++;
        }
        if (b) {
          secondLed++;
        }
        long t = token(run, shard);
        if (t != token) {
          tokenChanges++;
          token = t;
        }
        if (System.nanoTime() > nextInsert) {
          events.add(run.add(QUEUE, "during-duplicate", Expect.DELIVERED));
          nextInsert = System.nanoTime() + Duration.ofMillis(200).toNanos();
        }
        Thread.sleep(50);
      }
    } finally {
      second.stop();
    }
    run.note("fault 8: the second manager stopped");
    PoisonRun.awaitDb(Duration.ofSeconds(8), () -> run.allAcked(QUEUE, events));
  }

  private static boolean leads(SluiceServer server, String shard) {
    return server.engine().shard(shard).map(ShardManager::leading).orElse(false);
  }

  private static long token(PoisonRun run, String shard) throws SQLException {
    try (Connection c = run.tables.connection();
        PreparedStatement ps =
            c.prepareStatement("SELECT token FROM sluice_lease WHERE shard = ?")) {
      ps.setString(1, shard);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : -1;
      }
    }
  }

  @Override
  public Verdict judge(PoisonRun run) throws Exception {
    long dup = run.tally.duplicated(QUEUE);
    String notAcked = run.notAcked(QUEUE, events);
    boolean ok = secondLed == 0 && bothLed == 0 && tokenChanges == 0 && dup == 0;
    return Verdict.of(
        ok && notAcked.isEmpty(),
        String.format(
            "second manager %s; of %d samples the second led in %d, both at once in %d; lease"
                + " token changed %d time(s); %d of %d events fired twice, %s",
            refused == null ? "started" : "refused to start (" + refused + ")",
            samples,
            secondLed,
            bothLed,
            tokenChanges,
            dup,
            events.size(),
            notAcked.isEmpty() ? "all acked" : "not acked: " + notAcked));
  }
}
