package dev.sluice.core.queue.poll;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.loop.Ticker;
import dev.sluice.core.loop.Waiter;
import dev.sluice.db.store.EventRow;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the binlog follower tells a poller, without a server: a row due now is expected until a read
 * returns it (or for 20 ms); a row due later is remembered by its due time until a read's horizon
 * covers it; a row behind the sweep's cursor makes it start again.
 */
class RowNewsTest {
  static final long MS = 1_000_000L;

  static EventRow row(long id) {
    return new EventRow(id, 0, 0, 0, 0, "", "", "", Map.of());
  }

  @Test
  void aRowToldDueNowIsExpectedUntilAReadReturnsItOr20Ms() {
    RowNews news = new RowNews(new Waiter(Ticker.SYSTEM));
    news.following(() -> true);
    news.readAhead(200 * MS);
    long now = 1_000_000 * MS;
    news.pending(7, now, now, 0);
    assertThat(news.unread(MS)).as("told, not read yet").isTrue();
    news.read(List.of(row(6)));
    assertThat(news.unread(2 * MS)).as("another row was read").isTrue();
    news.read(List.of(row(7)));
    assertThat(news.unread(3 * MS)).isFalse();

    news.pending(8, now, now, 0);
    assertThat(news.unread(RowNews.EXPECT_NS + 1)).as("given up after 20 ms").isFalse();
  }

  @Test
  void aRowReadBeforeItsEventArrivesIsNotExpected() {
    RowNews news = new RowNews(new Waiter(Ticker.SYSTEM));
    news.following(() -> true);
    news.readAhead(200 * MS);
    long now = 1_000_000 * MS;
    news.read(List.of(row(11))); // the read woken by row 10 found 11 as well
    news.pending(11, now, now, 0);
    assertThat(news.unread(MS)).as("already read: no read again for it").isFalse();
  }

  @Test
  void aRowDueLaterIsRememberedUntilAReadCoversIt() {
    RowNews news = new RowNews(new Waiter(Ticker.SYSTEM));
    news.readAhead(200 * MS);
    long now = 1_000_000 * MS;
    news.pending(9, now + 1_520 * MS, now, 0);
    assertThat(news.unread(0)).as("not due within the read-ahead: not expected now").isFalse();
    assertThat(news.remembered()).isEqualTo(1);
    assertThat(news.slotNs()).isEqualTo(50 * MS);
    assertThat(news.nextDueNs()).as("its slot's start").isEqualTo(now + 1_500 * MS);
    news.covered(now + 1_520 * MS);
    assertThat(news.remembered()).as("the read's horizon is inside the slot").isEqualTo(1);
    news.covered(now + 1_550 * MS);
    assertThat(news.remembered()).isZero();
  }

  @Test
  void pastItsSlotsItKeepsThePollingPaceUntilAReadCoversTheRest() {
    RowNews news = new RowNews(new Waiter(Ticker.SYSTEM));
    news.readAhead(200 * MS);
    long now = 1_000_000 * MS;
    for (int i = 1; i <= RowNews.MAX_SLOTS + 10; i++) {
      news.pending(i, now + 1_000 * MS + i * 50 * MS, now, 0);
    }
    assertThat(news.remembered()).isEqualTo(RowNews.MAX_SLOTS);
    long last = now + 1_000 * MS + (RowNews.MAX_SLOTS + 10) * 50 * MS;
    assertThat(news.overflowUntilNs()).isEqualTo(last + 50 * MS);
    news.covered(last);
    assertThat(news.overflowUntilNs()).as("not covered yet").isEqualTo(last + 50 * MS);
    news.covered(last + 50 * MS);
    assertThat(news.overflowUntilNs()).isEqualTo(Long.MIN_VALUE);
    assertThat(news.remembered()).isZero();
  }

  @Test
  void aRowToldBehindTheCursorRestartsTheSweepOnce() {
    RowNews news = new RowNews(new Waiter(Ticker.SYSTEM));
    long now = 1_000_000 * MS;
    news.sweepStarted();
    assertThat(news.toldBefore(now)).isFalse();
    news.pending(-1, now - 5 * MS, now, 0);
    assertThat(news.toldBefore(now)).as("a row due before the cursor").isTrue();
    assertThat(news.toldBefore(now - 10 * MS)).as("the cursor is behind it").isFalse();
    news.sweepStarted();
    assertThat(news.toldBefore(now)).isFalse();
    news.readAgain();
    assertThat(news.toldBefore(Long.MIN_VALUE + 1)).as("a gap: read everything again").isTrue();
  }
}
