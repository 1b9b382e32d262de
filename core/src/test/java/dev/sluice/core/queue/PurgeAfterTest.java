package dev.sluice.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.loop.FakeTicker;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * purge_after on a ticker the test moves by hand, against a real table: settled events go once it
 * has passed, not before, and fired ones stay. Nothing sleeps; the rule is checked just before and
 * just after its time.
 */
class PurgeAfterTest {
  static TestQueues queues;

  @BeforeAll
  static void start() {
    queues = TestQueues.fresh(PurgeAfterTest.class);
  }

  @AfterAll
  static void stop() {
    queues.close();
  }

  final FakeTicker ticker = new FakeTicker();

  /** A queue whose clock runs on the test's ticker, anchored once to the database's time. */
  QueueContext queue(String name, String options) throws SQLException {
    return queues.create(name, options, ticker);
  }

  @Test
  void settledEventsArePurgedOncePurgeAfterPassed() throws SQLException {
    QueueContext ctx = queue("purge_after", "purge_after=1h");
    EventRef acked = queues.fireOne(ctx);
    assertThat(ctx.dispatch().ack(List.of(acked), ctx.clock().nowNs()))
        .containsEntry(acked, CasOutcome.APPLIED);
    EventRef held = queues.fireOne(ctx); // fired, never acked: never purged
    Purger purger = new Purger(ctx);

    ticker.advance(Duration.ofMinutes(59));
    purger.run();
    assertThat(queues.count("SELECT COUNT(*) FROM purge_after"))
        .as("before purge_after")
        .isEqualTo(2);

    ticker.advance(Duration.ofMinutes(2));
    purger.run();
    assertThat(queues.count("SELECT COUNT(*) FROM purge_after WHERE id = " + acked.id())).isZero();
    assertThat(queues.count("SELECT COUNT(*) FROM purge_after WHERE id = " + held.id()))
        .isEqualTo(1);
  }
}
