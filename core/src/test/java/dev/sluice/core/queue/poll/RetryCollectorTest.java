package dev.sluice.core.queue.poll;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.queue.TestQueues;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.dispatch.Inbox;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.JdbcEventStore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The retry collector follows the queue's current options: an in-place {@code ALTER TABLE ...
 * COMMENT} of ack_wait changes how often it looks for orphaned events (half of ack_wait, from 100
 * ms to 1 s), so a shorter ack_wait has a crashed manager's events retried sooner.
 */
class RetryCollectorTest {

  static TestQueues queues;

  @BeforeAll
  static void start() {
    queues = TestQueues.fresh(RetryCollectorTest.class);
  }

  @AfterAll
  static void stop() {
    queues.close();
  }

  @Test
  void anInPlaceAlterOfAckWaitTakesEffectInTheCollector() throws Exception {
    QueueContext ctx = queues.create("collect_alter", "ack_wait=60s");
    RetryCollector collector = new RetryCollector(ctx, new Inbox());
    assertThat(collector.intervalNs()).isEqualTo(TimeUnit.SECONDS.toNanos(1));

    queues.db.exec("ALTER TABLE collect_alter COMMENT = 'sluice_queue ack_wait=200ms'");
    QueueTable altered = queues.discover("collect_alter");
    ctx.update(altered, new JdbcEventStore(queues.ds, altered));

    assertThat(ctx.options().ackWait()).hasMillis(200);
    assertThat(collector.intervalNs())
        .as("the collector's interval after ack_wait=200ms was applied in place")
        .isEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
  }
}
