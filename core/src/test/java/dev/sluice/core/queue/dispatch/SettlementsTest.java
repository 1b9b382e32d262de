package dev.sluice.core.queue.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.fairness.TenantLimits;
import dev.sluice.core.loop.DbClock;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.context.QueueMetrics;
import dev.sluice.core.queue.dispatch.DispatcherCommand.Polled;
import dev.sluice.core.window.CachedEvent;
import dev.sluice.db.QueueOptions;
import dev.sluice.db.QueueTable;
import dev.sluice.db.store.CasOutcome;
import dev.sluice.db.store.EventRef;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The dispatcher's ledgers driven on the test's thread (it owns them here), wired as the dispatcher
 * wires them: what an outlet's ack, nack, release, an ack deadline, a detach and a graceful stop's
 * release do to the credit an event in flight holds, and what a poll may bring back once the
 * database has settled it. No database: what would go to the ack batcher is collected, and its
 * answers are made up.
 */
class SettlementsTest {
  static final String TENANT = "t";

  /** An outlet with a few credits, counted the way a receiver stream counts them. */
  static final class CountingOutlet implements Outlet {
    final int max;
    final AtomicInteger held = new AtomicInteger();
    final AtomicInteger overReturned = new AtomicInteger();

    CountingOutlet(int max) {
      this.max = max;
    }

    @Override
    public String id() {
      return "r1";
    }

    @Override
    public long streamId() {
      return 1;
    }

    @Override
    public int maxInFlight() {
      return max;
    }

    @Override
    public int free() {
      return max - held.get();
    }

    @Override
    public boolean tryReserve(String workClass) {
      if (held.get() >= max) {
        return false;
      }
      held.incrementAndGet();
      return true;
    }

    @Override
    public void unreserve(String workClass) {
      if (held.decrementAndGet() < 0) {
        overReturned.incrementAndGet();
      }
    }

    @Override
    public void deliver(String shard, List<Delivery> batch) {}
  }

  /** One queue's ledgers, as {@link Dispatcher} builds them, with one outlet attached. */
  static final class Ledgers {
    final QueueContext ctx;
    final InFlightTable table = new InFlightTable();
    final WindowFeed feed;
    final CreditLedger ledger;

    /** What would be written, in order. */
    final List<Completion> written = new ArrayList<>();

    final Settlements settlements;
    final CountingOutlet outlet = new CountingOutlet(2);
    final AttachedOutlet attached = new AttachedOutlet(outlet, "s");

    Ledgers(String options) {
      this(context(options));
    }

    Ledgers(QueueContext ctx) {
      this.ctx = ctx;
      feed = new WindowFeed(ctx, table);
      ledger = new CreditLedger(ctx, 0, t -> feed.window().held(t) > 0, table::count);
      settlements = new Settlements(ctx, table, ledger, feed, written::add);
      ledger.attach(attached);
    }

    /** Takes a credit for event {@code id} and fires it, as a fire round and its answer do. */
    InFlight fire(long id, long now) {
      return fire(event(id), now);
    }

    /** Takes a credit for {@code e} and fires it. */
    InFlight fire(CachedEvent e, long now) {
      assertThat(ledger.assign(e)).isSameAs(attached);
      table.firing(List.of(e));
      table.fireReturned(List.of(e));
      return table.fired(e, attached, now, now + 1_000);
    }

    void assertNoCreditHeld() {
      assertThat(outlet.held.get()).as("outlet credits held").isZero();
      assertThat(outlet.overReturned.get()).as("credits given back twice").isZero();
      assertThat(attached.inFlight).as("this shard's count on the outlet").isZero();
      assertThat(ledger.tenants().held(TENANT)).as("tenant credits held").isZero();
    }
  }

  static QueueContext context(String options) {
    return context(options, List.of());
  }

  static QueueContext context(String options, List<String> userColumns) {
    QueueOptions o = QueueOptions.parseComment("q", ("sluice_queue " + options).strip());
    QueueTable table =
        new QueueTable(
            "q", o, false, userColumns, false, false, "sluice_poll", "sluice_tenant", Map.of());
    return new QueueContext(
        "s",
        table,
        null, // nothing here reaches the database
        new DbClock(Clock.systemUTC()),
        new QueueMetrics(new SimpleMeterRegistry(), "s", "q"),
        TenantLimits.of(o));
  }

  static CachedEvent event(long id) {
    return new CachedEvent(id, 0, 0, 0, 0, TENANT, List.of(), "", Map.of());
  }

  /** What can happen to an event in flight, in any order. */
  record Step(String name, Consumer<Ledgers> run) {
    @Override
    public String toString() {
      return name;
    }
  }

  static final List<Step> STEPS =
      List.of(
          new Step("ack", l -> l.settlements.acked(l.attached, List.of(new EventRef(1, 1)))),
          new Step(
              "nack",
              l -> l.settlements.nacked(l.attached, List.of(new Nack(new EventRef(1, 1), 0, "x")))),
          new Step("timeout", l -> l.settlements.expire(Long.MAX_VALUE)),
          new Step(
              "detach",
              l -> {
                l.ledger.detach(l.attached, System.nanoTime());
                l.settlements.detached(l.attached, "stream closed");
              }),
          new Step(
              "released",
              l -> l.settlements.released(l.attached, List.of(new EventRef(1, 1)), "draining")),
          new Step("release all", l -> l.settlements.releaseAll("manager stopping")));

  static void permutations(List<Step> left, List<Step> done, List<List<Step>> out) {
    if (left.isEmpty()) {
      out.add(List.copyOf(done));
      return;
    }
    for (Step s : left) {
      List<Step> rest = new ArrayList<>(left);
      rest.remove(s);
      done.add(s);
      permutations(rest, done, out);
      done.remove(done.size() - 1);
    }
  }

  @Test
  void aCreditIsGivenBackExactlyOnceWhateverComesFirst() {
    List<List<Step>> orders = new ArrayList<>();
    permutations(STEPS, new ArrayList<>(), orders);
    assertThat(orders).hasSize(720);
    for (List<Step> order : orders) {
      Ledgers l = new Ledgers("");
      long now = l.ctx.clock().nowNs();
      InFlight f = l.fire(1, now);
      assertThat(l.outlet.held.get()).as("the fire holds one credit").isEqualTo(1);
      assertThat(l.ledger.tenants().held(TENANT)).isEqualTo(1);
      for (Step s : order) {
        s.run().accept(l);
        l.assertNoCreditHeld();
      }
      assertThat(f.settling).as(order.toString()).isTrue();
      // The database answers every change it was sent: the event leaves the table once, and
      // gives back nothing more.
      List<Completion> sent = List.copyOf(l.written);
      List<CasOutcome> outcomes = new ArrayList<>();
      for (int i = 0; i < sent.size(); i++) {
        outcomes.add(i == 0 ? CasOutcome.APPLIED : CasOutcome.STALE);
      }
      l.settlements.settled(sent, outcomes);
      assertThat(l.table.isInFlight(1)).as(order.toString()).isFalse();
      assertThat(l.table.count()).isZero();
      l.assertNoCreditHeld();
    }
  }

  @Test
  void everyFailedAttemptGoesThroughTheRetryPolicy() {
    // max_attempts=1: each failed attempt is the last one, so each path's release says dead.
    Ledgers l = new Ledgers("max_attempts=1");
    long now = l.ctx.clock().nowNs();
    l.fire(1, now);
    l.settlements.expire(Long.MAX_VALUE);
    l.fire(2, now);
    l.settlements.nacked(l.attached, List.of(new Nack(new EventRef(2, 1), 0, "bad")));
    l.fire(3, now);
    l.ledger.detach(l.attached, System.nanoTime());
    l.settlements.detached(l.attached, "stream closed");
    l.settlements.orphans(List.of(new EventRef(4, 1)));
    List<Completion> sent = l.written;
    assertThat(sent).extracting(c -> c.ref().id()).containsExactly(1L, 2L, 3L, 4L);
    assertThat(sent).allSatisfy(c -> assertThat(c.dead()).as(c.reason()).isTrue());
    assertThat(sent)
        .extracting(Completion::reason)
        .containsExactly("ack timeout", "nack: bad", "stream closed", "orphan (no live owner)");
  }

  @Test
  void aPollThatBeganBeforeASettleDoesNotBringTheEventBack() {
    Ledgers l = new Ledgers("");
    long now = l.ctx.clock().nowNs();
    InFlight f = l.fire(1, now);
    long before = l.feed.settledSeq();
    l.feed.onPolled(Polled.sweep(List.of(event(1)), before, false), now);
    assertThat(l.feed.window().contains(1)).as("in flight: the poll's row is stale").isFalse();

    l.settlements.acked(l.attached, List.of(f.ref()));
    l.settlements.settled(List.of(l.written.remove(0)), List.of(CasOutcome.APPLIED));
    assertThat(l.table.isInFlight(1)).isFalse();
    l.feed.onPolled(Polled.sweep(List.of(event(1)), before, false), now);
    assertThat(l.feed.window().contains(1)).as("a poll from before the ack").isFalse();

    // A poll that began after the settle sees the row as it is (here: pending again, say after an
    // operator's replay): it comes in.
    l.feed.onPolled(Polled.sweep(List.of(event(1)), l.feed.settledSeq(), false), now);
    assertThat(l.feed.window().contains(1)).isTrue();
  }

  @Test
  void dispatchToAckIsMeasuredFromTheFireAfterAnInPlaceAckWaitChange() {
    Ledgers l = new Ledgers("ack_wait=1s");
    long now = l.ctx.clock().nowNs();
    InFlight f = l.fire(1, now);
    // The migration raises ack_wait in place: the event in flight keeps its fire and deadline.
    QueueOptions raised = QueueOptions.parseComment("q", "sluice_queue ack_wait=1h");
    l.ctx.update(
        new QueueTable(
            "q", raised, false, List.of(), false, false, "sluice_poll", "sluice_tenant", Map.of()),
        null);
    assertThat(l.ctx.options().ackWait()).isEqualTo(Duration.ofHours(1));

    l.settlements.committed(l.attached, List.of(f.ref()));
    Timer t = l.ctx.metrics().dispatchToAck();
    assertThat(t.count()).isEqualTo(1);
    // Measured from the deadline back with the new ack_wait, it would be about 59 minutes.
    assertThat(t.max(TimeUnit.MILLISECONDS))
        .as("fire to ack, from the fire the entry holds")
        .isLessThan(Duration.ofSeconds(1).toMillis());
  }

  @Test
  void maxConcurrencyCountsEventsUntilTheDatabaseSettledThem() {
    Ledgers l = new Ledgers("max_concurrency=1");
    long now = l.ctx.clock().nowNs();
    InFlight f = l.fire(1, now);
    assertThat(l.ledger.freeSlots()).isZero();
    l.settlements.acked(l.attached, List.of(f.ref()));
    assertThat(l.outlet.free()).as("the outlet's credit is back at the ack").isEqualTo(2);
    assertThat(l.ledger.freeSlots()).as("but the ack is not written yet").isZero();
    l.settlements.settled(List.of(l.written.remove(0)), List.of(CasOutcome.APPLIED));
    assertThat(l.ledger.freeSlots()).isEqualTo(1);
  }

  /**
   * The children of event groups that end (acked, dead, acked in the receiver's transaction) are
   * told to the group closer by key when the queue held them (the key from the row the poll read),
   * so the closer reads no row to find their groups; by id when it did not (fired before a restart,
   * say); a release to pending, or a change refused, is not told at all.
   */
  @Test
  void theGroupsOfEndedChildrenAreToldByKeyWhenHeldAndByIdWhenNot() {
    List<java.util.Collection<String>> keys = new ArrayList<>();
    List<java.util.Collection<Long>> ids = new ArrayList<>();
    QueueContext ctx = context("max_attempts=1", List.of("group_key"));
    ctx.groups(
        new dev.sluice.core.groups.Groups() {
          @Override
          public void settled(QueueTable table, java.util.Collection<Long> settled) {
            ids.add(List.copyOf(settled));
          }

          @Override
          public void childrenSettled(java.util.Collection<String> settled) {
            keys.add(Set.copyOf(settled));
          }

          @Override
          public void sealed(String key) {}

          @Override
          public dev.sluice.db.store.GroupStore store() {
            return null;
          }
        });
    Ledgers l = new Ledgers(ctx);
    long now = ctx.clock().nowNs();
    InFlight a = l.fire(child(1, "g-a"), now);
    InFlight b = l.fire(child(2, "g-b"), now);
    l.settlements.acked(l.attached, List.of(a.ref(), new EventRef(9, 1)));
    l.settlements.nacked(l.attached, List.of(new Nack(b.ref(), 0, "bad"))); // last attempt: dead
    InFlight c = l.fire(child(3, "g-c"), now);
    l.settlements.nacked(l.attached, List.of(new Nack(c.ref(), 0, "bad")));
    List<Completion> sent = List.copyOf(l.written);
    l.settlements.settled(
        sent,
        List.of(CasOutcome.APPLIED, CasOutcome.APPLIED, CasOutcome.APPLIED, CasOutcome.STALE));
    assertThat(keys).containsExactly(Set.of("g-a", "g-b"));
    assertThat(ids).containsExactly(List.of(9L));

    keys.clear();
    ids.clear();
    InFlight d = l.fire(child(4, "g-d"), now);
    l.settlements.committed(l.attached, List.of(d.ref(), new EventRef(10, 1)));
    assertThat(keys).containsExactly(Set.of("g-d"));
    assertThat(ids).containsExactly(List.of(10L));
  }

  static CachedEvent child(long id, String group) {
    return new CachedEvent(id, 0, 0, 0, 0, TENANT, List.of(), "", Map.of("group_key", group));
  }
}
