package dev.sluice.core.queue.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.loop.Backoff;
import dev.sluice.core.loop.FakeTicker;
import dev.sluice.core.queue.TestQueues;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.EventRow;
import dev.sluice.db.store.Release;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The timing rules of a queue on a ticker the test moves by hand, against a real table: the ack
 * deadline and the retry backoff (the ack writer's retry of a row: {@code StuckRowsTest};
 * purge_after: {@code PurgeAfterTest}). Nothing sleeps; each rule is checked just before and just
 * after its time.
 */
class TimingRulesTest {
  static TestQueues queues;

  @BeforeAll
  static void start() {
    queues = TestQueues.fresh(TimingRulesTest.class);
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
  void anEventNotAckedByAckWaitComesBack() throws SQLException {
    QueueContext ctx = queue("ack_deadline", "ack_wait=30s min_backoff=1s max_backoff=1s");
    SettlementsTest.CountingOutlet outlet = new SettlementsTest.CountingOutlet(5);
    AttachedOutlet attached = new AttachedOutlet(outlet, "s");
    InFlightTable table = new InFlightTable();
    WindowFeed feed = new WindowFeed(ctx, table);
    CreditLedger ledger = new CreditLedger(ctx, 0, t -> false, table::count);
    List<Completion> written = new ArrayList<>();
    Settlements settlements = new Settlements(ctx, table, ledger, feed, written::add);
    ledger.attach(attached);

    EventRef fired = queues.fireOne(ctx);
    long firedAt = ctx.clock().nowNs();
    CachedEvent e = new CachedEvent(fired.id(), 0, 0, 0, 0, "t", List.of(), "", Map.of());
    assertThat(ledger.assign(e)).isSameAs(attached);
    table.firing(List.of(e));
    table.fireReturned(List.of(e));
    table.fired(e, attached, firedAt, Backoff.at(firedAt, Duration.ofSeconds(30).toNanos()));

    // The manager that fired it: its own deadline, in memory.
    ticker.advance(Duration.ofSeconds(29));
    settlements.expire(ctx.clock().nowNs());
    assertThat(written).as("before ack_wait").isEmpty();
    // Any manager (the retry collector's query): the row's deadline, in the database.
    assertThat(ctx.dispatch().expiredFired(ctx.clock().nowNs(), 10)).isEmpty();

    ticker.advance(Duration.ofSeconds(2));
    settlements.expire(ctx.clock().nowNs());
    assertThat(written).extracting(Completion::reason).containsExactly("ack timeout");
    assertThat(outlet.held.get()).as("the outlet's credit is back").isZero();
    assertThat(ctx.dispatch().expiredFired(ctx.clock().nowNs(), 10)).containsExactly(fired);

    // Written back, it is pending again after min_backoff (1 s), not before.
    Release back = written.get(0).release();
    assertThat(ctx.dispatch().release(List.of(back))).containsEntry(fired, CasOutcome.APPLIED);
    assertThat(ctx.dispatch().pollPending(ctx.clock().nowNs(), 10)).isEmpty();
    ticker.advance(Duration.ofMillis(1_100));
    assertThat(ctx.dispatch().pollPending(ctx.clock().nowNs(), 10))
        .extracting(EventRow::id)
        .containsExactly(fired.id());
  }

  @Test
  void aFailedAttemptWaitsExponentiallyFromMinToMaxBackoff() throws SQLException {
    QueueContext ctx = queue("retry_backoff", "min_backoff=2s max_backoff=16s max_attempts=100");
    long s = Duration.ofSeconds(1).toNanos();
    EventRef ref = queues.fireOne(ctx);
    // Attempt n waits between half and all of min_backoff * 2^(n-1) (never under min_backoff),
    // up to max_backoff.
    long[][] bounds = {
      {2 * s, 2 * s}, {2 * s, 4 * s}, {4 * s, 8 * s}, {8 * s, 16 * s}, {8 * s, 16 * s}
    };
    for (int attempt = 1; attempt <= 5; attempt++) {
      long now = ctx.clock().nowNs();
      Release r = ctx.retry().afterFailure(ref, now, 0, "nack: no");
      long delay = r.retryAtNs() - now;
      assertThat(delay)
          .as("attempt %d", attempt)
          .isBetween(bounds[attempt - 1][0], bounds[attempt - 1][1]);
      assertThat(ctx.dispatch().release(List.of(r))).containsEntry(ref, CasOutcome.APPLIED);
      ticker.advance(Duration.ofNanos(delay - 100_000_000L));
      assertThat(ctx.dispatch().pollPending(ctx.clock().nowNs(), 10))
          .as("before its time")
          .isEmpty();
      ticker.advance(Duration.ofMillis(200));
      EventRow row = ctx.dispatch().pollPending(ctx.clock().nowNs(), 10).get(0);
      ref = new EventRef(row.id(), row.epoch());
      long deadline = Backoff.at(ctx.clock().nowNs(), ctx.options().ackWait().toNanos());
      assertThat(ctx.dispatch().fire(List.of(ref), deadline))
          .containsEntry(ref, CasOutcome.APPLIED);
      ref = new EventRef(row.id(), row.epoch() + 1);
    }
  }
}
