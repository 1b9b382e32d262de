package dev.sluice.core.queue.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.fairness.TenantLimits;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.context.QueueMetrics;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Polled;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.PollPosition;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the dispatcher does with polled rows, driven on the test's thread (it owns the dispatcher's
 * state here): which rows the window takes, and which it lets go and reports to the poller.
 */
class DispatcherPollTest {
  static final QueueOptions OPTIONS = QueueOptions.parseComment("q", "sluice_queue cache_size=100");

  final Dispatcher d =
      new Dispatcher(context(), new Inbox(), new Dispatcher.Ports(b -> {}, c -> {}, () -> {}));

  static QueueContext context() {
    QueueTable table =
        new QueueTable(
            "q", OPTIONS, false, List.of(), false, false, "sluice_poll", "sluice_tenant", Map.of());
    return new QueueContext(
        "s",
        table,
        null, // a Polled command makes no database call
        new DbClock(Clock.systemUTC()),
        new QueueMetrics(new SimpleMeterRegistry(), "s", "q"),
        TenantLimits.of(OPTIONS));
  }

  /** Tenant t's rows with ids {@code from..to}, row i at poll position (i * 10, i). */
  static List<CachedEvent> rows(int from, int to) {
    List<CachedEvent> out = new ArrayList<>();
    for (int i = from; i <= to; i++) {
      out.add(new CachedEvent(i, 0, i * 10L, 0, 0, "t", List.of(), "", Map.of()));
    }
    return out;
  }

  static Polled read(List<CachedEvent> rows, int part, PollPosition startedAfter) {
    return Polled.tenants(rows, 0, part, Map.of("t", startedAfter));
  }

  @Test
  void rowsOverATenantsPartAreLetGoAndReportedFromTheFirst() {
    d.handle(read(rows(1, 5), 3, PollPosition.FIRST));
    assertThat(d.feed().held("t")).isEqualTo(3);
    assertThat(d.feed().drainLetGo()).containsExactly(Map.entry("t", PollPosition.before(40, 4)));
    assertThat(d.feed().drainLetGo()).as("each report is taken once").isEmpty();
  }

  @Test
  void aTenantsRowsPastAGapWaitForAReadThatStartsAtOrBeforeIt() {
    d.handle(read(rows(1, 5), 3, PollPosition.FIRST)); // rows 4 and 5 let go: a gap at 4
    // A read from where the last one ended (past the gap) finds room, but its rows would be
    // served ahead of rows 4 and 5: they are let go too.
    d.handle(read(rows(6, 7), 10, PollPosition.at(50, 5)));
    assertThat(d.feed().held("t")).isEqualTo(3);
    assertThat(d.feed().drainLetGo()).containsExactly(Map.entry("t", PollPosition.before(40, 4)));
    // The poller's read from the gap covers it: its rows come in, in order.
    d.handle(read(rows(4, 7), 10, PollPosition.before(40, 4)));
    assertThat(d.feed().held("t")).isEqualTo(7);
    assertThat(d.feed().drainLetGo()).isEmpty();
    // The gap is closed: a read from the end goes on as usual.
    d.handle(read(rows(8, 8), 10, PollPosition.at(70, 7)));
    assertThat(d.feed().held("t")).isEqualTo(8);
  }

  @Test
  void theRecentRowsPollIsNotHeldBackByAGap() {
    d.handle(read(rows(1, 5), 3, PollPosition.FIRST));
    // A quiet tenant's new row must not wait for a busy tenant's rewind: only per-tenant reads
    // are checked against the gap.
    d.handle(Polled.recent(rows(9, 9), 0, 10));
    assertThat(d.feed().held("t")).isEqualTo(4);
  }
}
