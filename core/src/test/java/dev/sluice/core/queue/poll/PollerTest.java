package dev.sluice.core.queue.poll;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.loop.Ticker;
import dev.sluice.core.loop.Waiter;
import dev.sluice.core.queue.TestQueues;
import dev.sluice.core.queue.context.QueueContext;
import dev.sluice.core.queue.dispatch.Dispatcher;
import dev.sluice.core.queue.dispatch.Inbox;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The poller's passes, driven one at a time on the test's thread against a real table: the
 * dispatcher is not started, and what the poller hands it is run after each pass.
 */
class PollerTest {
  static TestQueues queues;

  @BeforeAll
  static void start() {
    queues = TestQueues.fresh(PollerTest.class);
  }

  @AfterAll
  static void stop() {
    queues.close();
  }

  static void insert(String table, String tenant, long timeNextNs) throws SQLException {
    queues.db.exec(
        "INSERT INTO "
            + table
            + " (tenant, time_next) VALUES ('"
            + tenant
            + "', "
            + timeNextNs
            + ")");
  }

  static long nowNs() {
    return System.currentTimeMillis() * 1_000_000L;
  }

  /** A dispatcher on {@code ctx}, not started, that fires nothing (no round runs). */
  static Dispatcher dispatcher(QueueContext ctx) {
    return new Dispatcher(ctx, new Inbox(), new Dispatcher.Ports(b -> {}, c -> {}, () -> {}));
  }

  /** The poller feeding {@code d}'s window and inbox. */
  static Poller poller(QueueContext ctx, Dispatcher d) {
    return new Poller(
        ctx, d.feed(), d.inbox(), new Waiter(Ticker.SYSTEM), new RetryCollector(ctx, d.inbox()));
  }

  /** One pass of the poller, then the dispatcher takes in what it read. */
  static void pass(Poller p, Dispatcher d) {
    p.pollOnce();
    d.runInbox();
  }

  /** A queue with a 100-event window and a dispatcher and poller on it, not started. */
  static QueueContext queue(String name) throws SQLException {
    return queue(name, 100);
  }

  static QueueContext queue(String name, int cacheSize) throws SQLException {
    return queues.create(name, "cache_size=" + cacheSize);
  }

  /** A noisy backlog three times the window, due a minute ago; returns that time. */
  static long noisyBacklog(String table) throws SQLException {
    long old = nowNs() - TimeUnit.SECONDS.toNanos(60);
    StringBuilder sb = new StringBuilder("INSERT INTO " + table + " (tenant, time_next) VALUES ");
    for (int i = 0; i < 300; i++) {
      sb.append(i == 0 ? "" : ",").append("('noisy',").append(old + i).append(")");
    }
    queues.db.exec(sb.toString());
    return old;
  }

  @Test
  void aTenantWhoseEventTheRecentPollReadIsKnownToTheRounds() throws Exception {
    QueueContext ctx = queue("poll_known");
    Dispatcher d = dispatcher(ctx);
    Poller p = poller(ctx, d);
    noisyBacklog("poll_known");
    pass(p, d); // one poll for all: the noisy tenant is over its share
    pass(p, d); // tenant by tenant; the first round lists the tenants: only the noisy one
    assertThat(p.tenantMode()).isTrue();
    assertThat(p.rounds().knows("quiet")).isFalse();

    insert("poll_known", "quiet", nowNs());
    pass(p, d); // the poll of recent rows reads it
    assertThat(d.feed().held("quiet")).isEqualTo(1);
    // Its event may be sent and acked before the next round sees it in the window; the rounds
    // must know the tenant anyway, or its next event waits for the next listing (once a second).
    assertThat(p.rounds().knows("quiet")).isTrue();
  }

  @Test
  void aQuietTenantsNewEventIsReadByThePassThatRunsAPerTenantRound() throws Exception {
    QueueContext ctx = queue("poll_rounds");
    Dispatcher d = dispatcher(ctx);
    Poller p = poller(ctx, d);

    // A noisy backlog three times the window, then one quiet event: all due long ago.
    long old = noisyBacklog("poll_rounds");
    insert("poll_rounds", "quiet", old + 1_000);

    pass(p, d); // one poll for all: the window's first 100 rows are noisy, over its 50% share
    assertThat(p.tenantMode()).as("the noisy tenant hit its share").isFalse();
    assertThat(d.feed().held("noisy")).isEqualTo(50);
    pass(p, d); // tenant by tenant: the first round lists both tenants and reads each
    assertThat(p.tenantMode()).isTrue();
    assertThat(ctx.metrics().pollModeSwitches.count()).as("the switch is counted").isEqualTo(1);
    assertThat(d.feed().held("quiet")).isEqualTo(1);

    // The quiet tenant's next event commits; the next pass is one with a per-tenant round.
    insert("poll_rounds", "quiet", nowNs());
    p.rounds().roundDueNow();
    pass(p, d);
    assertThat(d.feed().held("quiet"))
        .as("the quiet tenant's new event is in the window after one pass, round or not")
        .isEqualTo(2);
    assertThat(d.feed().held("noisy"))
        .as("and the noisy tenant still holds its share")
        .isEqualTo(50);
  }

  /**
   * Finding 11: more tenants with pending events than one listing returns (1,000). The listing goes
   * on where it stopped, so a tenant late in the alphabet is known, and read, within a few
   * listings, however long the first tenants' backlogs stay.
   */
  @Test
  void everyTenantIsReachedWhenMoreThanOneListingHavePendingEvents() throws Exception {
    QueueContext ctx = queue("poll_many", 1000);
    Dispatcher d = dispatcher(ctx);
    Poller p = poller(ctx, d);
    long old = nowNs() - TimeUnit.SECONDS.toNanos(60);
    StringBuilder sb = new StringBuilder("INSERT INTO poll_many (tenant, time_next) VALUES ");
    for (int t = 0; t < 1100; t++) {
      for (int i = 0; i < 3; i++) {
        sb.append(t + i == 0 ? "" : ",");
        sb.append(String.format("('t%04d',%d)", t, old + t * 3 + i));
      }
    }
    queues.db.exec(sb.toString());
    insert("poll_many", "zzz_late", old + 10_000_000);
    pass(p, d); // one poll for all: the window (1,000) holds the first 334 tenants
    p.rounds().roundDueNow();
    p.rounds().discoveryDueNow();
    pass(p, d);
    for (int listing = 0; listing < 3 && !p.rounds().knows("zzz_late"); listing++) {
      p.rounds().roundDueNow();
      p.rounds().discoveryDueNow();
      pass(p, d);
    }
    assertThat(p.rounds().knows("zzz_late"))
        .as("known within a few listings, with 1,100 tenants before it")
        .isTrue();
  }
}
