package dev.sluice.core.queue.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.loop.Ticker;
import dev.sluice.core.loop.Waiter;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Outlet;
import dev.sluice.core.queue.TestQueues;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.poll.Poller;
import dev.sluice.core.queue.poll.RetryCollector;
import dev.sluice.core.queue.write.AckBatcher;
import dev.sluice.core.queue.write.Firer;
import dev.sluice.db.store.EventRef;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One event's path from the poll to its ack, told as the commands the dispatcher's inbox receives:
 * the poller, firer and ack batcher run their passes on the test's thread against a real table, and
 * the test drains the inbox as the dispatcher thread would, noting each command.
 */
class DispatcherCommandsTest {
  static TestQueues queues;

  @BeforeAll
  static void start() {
    queues = TestQueues.fresh(DispatcherCommandsTest.class);
  }

  @AfterAll
  static void stop() {
    queues.close();
  }

  /** An outlet with a few credits that keeps what it is sent. */
  static final class KeepingOutlet implements Outlet {
    final List<Delivery> sent = new ArrayList<>();
    int held;

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
      return 4;
    }

    @Override
    public int free() {
      return 4 - held;
    }

    @Override
    public boolean tryReserve(String workClass) {
      held++;
      return true;
    }

    @Override
    public void unreserve(String workClass) {
      held--;
    }

    @Override
    public void deliver(String shard, List<Delivery> batch) {
      sent.addAll(batch);
    }
  }

  @Test
  void oneEventFromPollToAckPassesThroughTheCommands() throws Exception {
    QueueContext ctx = queue("path_one");
    queues.db.exec("INSERT INTO path_one (tenant, time_next) VALUES ('t', 0)");
    Inbox inbox = new Inbox();
    List<FireBatch> toFire = new ArrayList<>();
    List<Completion> toWrite = new ArrayList<>();
    Waiter pollerWake = new Waiter(Ticker.SYSTEM);
    Dispatcher d =
        new Dispatcher(
            ctx, inbox, new Dispatcher.Ports(toFire::add, toWrite::add, pollerWake::wake));
    Poller poller = new Poller(ctx, d.feed(), inbox, pollerWake, new RetryCollector(ctx, inbox));
    Firer firer = new Firer(ctx, inbox);
    AckBatcher acks = new AckBatcher(ctx, inbox);
    AttachedOutlets outlets = new AttachedOutlets(ctx, inbox);
    KeepingOutlet outlet = new KeepingOutlet();
    List<String> seen = new ArrayList<>();

    outlets.attach(outlet);
    poller.pollOnce();
    drain(inbox, d, seen);
    long now = ctx.clock().nowNs();
    ((WindowFeed) d.feed()).window().promoteDue(now); // as the dispatcher's loop does first
    assertThat(d.fireRound(now)).as("a due event and a free outlet").isTrue();
    assertThat(toFire).as("handed to the firer's queue").hasSize(1);
    assertThat(outlet.sent).as("nothing is sent before the fire applied").isEmpty();

    firer.fire(List.copyOf(toFire));
    drain(inbox, d, seen);
    assertThat(outlet.sent).hasSize(1);
    EventRef sent = new EventRef(outlet.sent.get(0).id(), outlet.sent.get(0).epoch());
    assertThat(sent.epoch()).as("fired: epoch + 1").isEqualTo(1);
    assertThat(ctx.maintenance().counts().fired()).isEqualTo(1);
    assertThat(d.inFlightCount()).isEqualTo(1);

    outlets.acked(outlet, List.of(sent));
    drain(inbox, d, seen);
    assertThat(toWrite).as("handed to the ack batcher's queue").hasSize(1);
    acks.write(List.copyOf(toWrite));
    drain(inbox, d, seen);

    assertThat(seen).containsExactly("Attach", "Polled", "Fired", "Acked", "Settled");
    assertThat(d.inFlightCount()).as("settled: nothing in flight").isZero();
    assertThat(outlet.held).as("the outlet's credit came back").isZero();
    assertThat(ctx.maintenance().counts().acked()).as("the row is acked in the table").isEqualTo(1);
  }

  /** Applies what the inbox holds, in order, as the dispatcher thread does, noting each kind. */
  static void drain(Inbox inbox, Dispatcher d, List<String> seen) {
    inbox.runAll(
        c -> {
          seen.add(c.getClass().getSimpleName());
          d.handle(c);
        });
  }

  static QueueContext queue(String name) throws SQLException {
    return queues.create(name, "cache_size=10");
  }
}
