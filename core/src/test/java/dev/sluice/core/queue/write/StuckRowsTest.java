package dev.sluice.core.queue.write;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.loop.Backoff;
import dev.sluice.core.loop.FakeTicker;
import dev.sluice.core.queue.context.RetryPolicy;
import dev.sluice.core.queue.dispatch.Completion;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.store.EventRef;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A timing rule of the ack writer on a ticker the test moves by hand: a row whose write failed on
 * its own is tried again after the queue's backoff. Nothing sleeps; the rule is checked just before
 * and just after its time.
 */
class StuckRowsTest {
  final FakeTicker ticker = new FakeTicker();

  @Test
  void anAckWriteThatFailsOnItsRowIsTriedAgainAfterTheBackoff() {
    Backoff backoff =
        RetryPolicy.of(
                QueueOptions.parseComment(
                    "stuck_rows", "sluice_queue min_backoff=3s max_backoff=3s"))
            .backoff();
    StuckRows stuck = new StuckRows(ticker);
    Completion c = Completion.ack(new EventRef(1, 1), null);
    stuck.add(c, "refused", backoff);
    ticker.advance(Duration.ofMillis(2_900));
    assertThat(stuck.takeDue()).as("before min_backoff").isEmpty();
    ticker.advance(Duration.ofMillis(200));
    List<StuckRows.Stuck> due = stuck.takeDue();
    assertThat(due).extracting(x -> x.completion).containsExactly(c);
    // The second failure waits the backoff again; the database down costs no try.
    assertThat(stuck.failed(due.get(0), "refused", backoff)).isFalse();
    ticker.advance(Duration.ofMillis(2_900));
    assertThat(stuck.takeDue()).isEmpty();
    ticker.advance(Duration.ofMillis(200));
    assertThat(stuck.takeDue()).hasSize(1);
  }
}
