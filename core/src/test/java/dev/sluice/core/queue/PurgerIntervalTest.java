package dev.sluice.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.JdbcEventStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The purger follows the queue's current options: an in-place {@code ALTER TABLE ... COMMENT} of
 * purge_after changes how often it runs (a tenth of purge_after, from 1 s to 1 min), not only the
 * cutoff of its next run.
 */
class PurgerIntervalTest {

  static TestQueues queues;

  @BeforeAll
  static void start() {
    queues = TestQueues.fresh(PurgerIntervalTest.class);
  }

  @AfterAll
  static void stop() {
    queues.close();
  }

  @Test
  void anInPlaceAlterOfPurgeAfterTakesEffectInHowOftenThePurgeRuns() throws Exception {
    queues.db.exec(
        dev.sluice.db.QueueConvention.createTableSql(
            "purge_alter", java.util.List.of(), "sluice_queue purge_after=1h"));
    QueueTable table = queues.discover("purge_alter");
    QueueContext ctx = queues.context(table);
    Purger purger = new Purger(ctx);
    assertThat(purger.intervalMs()).isEqualTo(60_000);

    queues.db.exec("ALTER TABLE purge_alter COMMENT = 'sluice_queue purge_after=20s'");
    QueueTable altered = queues.discover("purge_alter");
    ctx.update(altered, new JdbcEventStore(queues.ds, altered));

    assertThat(purger.intervalMs())
        .as("the purger's interval after purge_after=20s was applied in place")
        .isEqualTo(2_000);
  }
}
