package dev.sluice.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.fairness.TenantLimits;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.context.QueueMetrics;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.JdbcEventStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The purger follows the queue's current options: an in-place {@code ALTER TABLE ... COMMENT} of
 * purge_after changes how often it runs (a tenth of purge_after, from 1 s to 1 min), not only the
 * cutoff of its next run.
 */
class PurgerIntervalTest {

  @BeforeAll
  static void start() {
    PurgeAfterTest.start();
  }

  @AfterAll
  static void stop() {
    PurgeAfterTest.stop();
  }

  @Test
  void anInPlaceAlterOfPurgeAfterTakesEffectInHowOftenThePurgeRuns() throws Exception {
    PurgeAfterTest.db.exec(
        dev.sluice.db.QueueConvention.createTableSql(
            "purge_alter", java.util.List.of(), "sluice_queue purge_after=1h"));
    QueueTable table = QueueContexts.discover(PurgeAfterTest.ds, "purge_alter");
    QueueContext ctx =
        new QueueContext(
            "s",
            table,
            new JdbcEventStore(PurgeAfterTest.ds, table),
            new DbClock(Clock.systemUTC()),
            new QueueMetrics(new SimpleMeterRegistry(), "s", "purge_alter"),
            TenantLimits.of(table.options()));
    Purger purger = new Purger(ctx);
    assertThat(purger.intervalMs()).isEqualTo(60_000);

    PurgeAfterTest.db.exec("ALTER TABLE purge_alter COMMENT = 'sluice_queue purge_after=20s'");
    QueueTable altered = QueueContexts.discover(PurgeAfterTest.ds, "purge_alter");
    ctx.update(altered, new JdbcEventStore(PurgeAfterTest.ds, altered));

    assertThat(purger.intervalMs())
        .as("the purger's interval after purge_after=20s was applied in place")
        .isEqualTo(2_000);
  }
}
