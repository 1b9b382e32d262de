package dev.sluice.core.queue.ordering;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Nack;
import dev.sluice.db.KeyRange;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.EventRef;
import dev.sluice.testkit.TestDatabase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Ordered delivery ({@code ordering=key}) on a real database, rule by rule: one event of a key at a
 * time and in id order; a nack, a timeout and a future head hold the key; a dead head skips or
 * halts it; a cancel releases it; a key's head left in flight by another leader holds the key; an
 * ordering option changed by ALTER; and a key's backlog read about once.
 */
class OrderedDeliveryTest {
  static EngineHarness harness;
  static TestDatabase db;
  static QueueEngine engine;
  static SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @BeforeAll
  static void start() {
    harness =
        EngineHarness.fresh(OrderedDeliveryTest.class)
            .managerId("ordered-test")
            .registry(registry)
            .start();
    db = harness.db();
    engine = harness.engine();
  }

  @AfterAll
  static void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  static final String KEY_INDEX = "KEY `sluice_ordering` (`k`, `state`, `id`)";

  static void table(String name, String comment) throws Exception {
    String create =
        QueueConvention.createTableSql(
            name, List.of("`k` VARCHAR(64) NULL", "`n` INT NULL", KEY_INDEX), "sluice_queue");
    // Written with the given comment, a queue's or not.
    db.exec(create.replace("COMMENT='sluice_queue'", "COMMENT='" + comment + "'"));
  }

  static void queue(String name, String options) throws Exception {
    table(name, "sluice_queue ordering=key ordering_column=k " + options);
    harness.awaitQueue(name);
  }

  static CollectingOutlet subscribe(String queue) {
    CollectingOutlet out = new CollectingOutlet(1000);
    engine.subscribe(out, queue, KeyRange.ALL);
    return out;
  }

  static long insert(String queue, String key, int n) throws Exception {
    return insert(queue, key, n, 0);
  }

  /** Inserts one event, due {@code delayMs} from now. */
  static long insert(String queue, String key, int n, long delayMs) throws Exception {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO "
                    + queue
                    + " (k, n, time_next) VALUES (?, ?, "
                    + QueueConvention.NOW_NS_SQL
                    + " + ?)",
                Statement.RETURN_GENERATED_KEYS)) {
      ps.setString(1, key);
      ps.setInt(2, n);
      ps.setLong(3, MILLISECONDS.toNanos(delayMs));
      ps.executeUpdate();
      try (ResultSet rs = ps.getGeneratedKeys()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  static void ack(String queue, CollectingOutlet out, Delivery d) {
    engine.outcomes(queue, "s1").acked(out, List.of(new EventRef(d.id(), d.epoch())));
  }

  static void nack(String queue, CollectingOutlet out, Delivery d, long retryAfterMs) {
    engine
        .outcomes(queue, "s1")
        .nacked(
            out,
            List.of(
                new Nack(
                    new EventRef(d.id(), d.epoch()), MILLISECONDS.toNanos(retryAfterMs), "no")));
  }

  static int state(String queue, long id) throws Exception {
    return longs(queue, "state", id).intValue();
  }

  static Long longs(String queue, String column, long id) throws Exception {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT " + column + " FROM " + queue + " WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  static long held(String queue) throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT COUNT(*) FROM "
                    + queue
                    + " WHERE state = 0 AND time_next >= "
                    + QueueConvention.HELD_NS)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void aKeysEventsGoOneAtATimeInIdOrderWhileOtherKeysGoAlongside() throws Exception {
    queue("ord_basic", "ack_wait=30s");
    CollectingOutlet out = subscribe("ord_basic");
    List<Long> a = new ArrayList<>();
    List<Long> b = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      a.add(insert("ord_basic", "A", i));
      b.add(insert("ord_basic", "B", i));
    }
    long free = insert("ord_basic", null, 0);
    // First the heads of A and B and the unordered event; nothing else while they are out: once
    // the other six are held (the poll has seen them and let them wait), none follows.
    List<Delivery> first = out.take(3, 5000);
    assertThat(first).extracting(Delivery::id).containsExactlyInAnyOrder(a.get(0), b.get(0), free);
    await().atMost(5, SECONDS).until(() -> held("ord_basic") == 6);
    assertThat(out.within(500)).isEmpty();
    assertThat(
            first.stream().filter(d -> d.id() == a.get(0)).findFirst().orElseThrow().orderingKey())
        .isEqualTo("A");
    assertThat(first.stream().filter(d -> d.id() == free).findFirst().orElseThrow().orderingKey())
        .isNull();
    // Each ack lets exactly the next event of that key go, in id order.
    Map<String, Delivery> out1 = new HashMap<>();
    first.forEach(d -> out1.put(String.valueOf(d.orderingKey()), d));
    Delivery headA = out1.get("A");
    Delivery headB = out1.get("B");
    for (int i = 1; i < 4; i++) {
      ack("ord_basic", out, headA);
      Delivery nextA = out.next(5000);
      assertThat(nextA).isNotNull();
      assertThat(nextA.id()).isEqualTo(a.get(i));
      assertThat(out.within(300)).isEmpty();
      ack("ord_basic", out, headB);
      Delivery nextB = out.next(5000);
      assertThat(nextB.id()).isEqualTo(b.get(i));
      headA = nextA;
      headB = nextB;
    }
    ack("ord_basic", out, headA);
    ack("ord_basic", out, headB);
    await().atMost(5, SECONDS).until(() -> state("ord_basic", b.get(3)) == 2);
    assertThat(held("ord_basic")).isZero();
    engine.unsubscribe(out, "test over");
  }

  @Test
  void aNackAndATimeoutKeepTheKeyWaitingForTheSameEvent() throws Exception {
    queue("ord_retry", "ack_wait=1s min_backoff=50ms max_backoff=100ms");
    CollectingOutlet out = subscribe("ord_retry");
    long a1 = insert("ord_retry", "A", 1);
    long a2 = insert("ord_retry", "A", 2);
    Delivery d = out.next(5000);
    assertThat(d.id()).isEqualTo(a1);
    nack("ord_retry", out, d, 50);
    Delivery again = out.next(5000);
    assertThat(again.id()).isEqualTo(a1);
    assertThat(again.epoch()).isEqualTo(2);
    // No answer: after ack_wait it times out, and still a1 comes back, not a2.
    Delivery third = out.next(8000);
    assertThat(third).isNotNull();
    assertThat(third.id()).isEqualTo(a1);
    assertThat(third.epoch()).isEqualTo(3);
    ack("ord_retry", out, third);
    Delivery next = out.next(5000);
    assertThat(next.id()).isEqualTo(a2);
    ack("ord_retry", out, next);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void aHeadAckedAtAnotherManagerLetsTheNextGoWithoutWaitingForItsDeadline() throws Exception {
    queue("ord_elsewhere", "ack_wait=60s");
    CollectingOutlet out = subscribe("ord_elsewhere");
    long a1 = insert("ord_elsewhere", "A", 1);
    long a2 = insert("ord_elsewhere", "A", 2);
    Delivery d = out.next(5000);
    assertThat(d.id()).isEqualTo(a1);
    await().atMost(5, SECONDS).until(() -> held("ord_elsewhere") == 1);
    // The receiver's ack lands at a manager that does not lead the shard (after a failover, say):
    // the leader still holds a1 in flight, for up to a minute.
    var elsewhere =
        new dev.sluice.db.store.JdbcEventStore(
            dev.sluice.db.DataSources.pool("elsewhere", db.url(), db.user(), db.password(), 1),
            engine.find("ord_elsewhere").orElseThrow().table());
    assertThat(
            elsewhere.ack(
                List.of(new EventRef(a1, d.epoch())), System.currentTimeMillis() * 1_000_000L))
        .containsValue(dev.sluice.db.store.CasOutcome.APPLIED);
    Delivery next = out.next(15_000);
    assertThat(next).as("a2 goes within seconds, not after a1's deadline").isNotNull();
    assertThat(next.id()).isEqualTo(a2);
    ack("ord_elsewhere", out, next);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void aKeyColumnNamedInAnotherCaseStillOrdersAndTurns() throws Exception {
    table("ord_case", "sluice_queue ordering=key ordering_column=K");
    await().atMost(10, SECONDS).until(() -> engine.find("ord_case").isPresent());
    CollectingOutlet out = subscribe("ord_case");
    long a1 = insert("ord_case", "A", 1);
    long a2 = insert("ord_case", "A", 2);
    Delivery d = out.next(5000);
    assertThat(d.id()).isEqualTo(a1);
    assertThat(d.orderingKey()).isEqualTo("A");
    assertThat(out.within(500)).isEmpty();
    ack("ord_case", out, d);
    Delivery next = out.next(5000);
    assertThat(next).as("the next event goes at the ack, not at a recheck").isNotNull();
    assertThat(next.id()).isEqualTo(a2);
    ack("ord_case", out, next);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void aDeadHeadLetsTheNextGoWithSkip() throws Exception {
    queue("ord_skip", "max_attempts=1");
    CollectingOutlet out = subscribe("ord_skip");
    long a1 = insert("ord_skip", "A", 1);
    long a2 = insert("ord_skip", "A", 2);
    Delivery d = out.next(5000);
    assertThat(d.id()).isEqualTo(a1);
    nack("ord_skip", out, d, 0);
    Delivery next = out.next(5000);
    assertThat(next).isNotNull();
    assertThat(next.id()).isEqualTo(a2);
    assertThat(state("ord_skip", a1)).isEqualTo(3); // dead
    ack("ord_skip", out, next);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void aDeadHeadHaltsTheKeyUntilItIsSkippedOrReplayed() throws Exception {
    queue("ord_halt", "max_attempts=1 ordering_on_dead=halt");
    CollectingOutlet out = subscribe("ord_halt");
    long a1 = insert("ord_halt", "A", 1);
    long a2 = insert("ord_halt", "A", 2);
    long a3 = insert("ord_halt", "A", 3);
    Delivery d = out.next(5000);
    assertThat(d.id()).isEqualTo(a1);
    nack("ord_halt", out, d, 0);
    await().atMost(5, SECONDS).until(() -> state("ord_halt", a1) == 3);
    // A later event of the key inserted now waits too.
    long a4 = insert("ord_halt", "A", 4);
    assertThat(out.within(1500)).isEmpty();
    var store = engine.find("ord_halt").orElseThrow();
    var unfenced =
        new dev.sluice.db.store.JdbcEventStore(
            dev.sluice.db.DataSources.pool("ord-test", db.url(), db.user(), db.password(), 2),
            store.table());
    assertThat(unfenced.haltedKeys(10))
        .singleElement()
        .satisfies(
            h -> {
              assertThat(h.key()).isEqualTo("A");
              assertThat(h.deadId()).isEqualTo(a1);
              assertThat(h.waiting()).isEqualTo(3);
            });
    // Replayed, the dead head goes first again.
    assertThat(unfenced.replayDead(List.of(new EventRef(a1, 1))))
        .containsValue(dev.sluice.db.store.CasOutcome.APPLIED);
    Delivery replayed = out.next(5000);
    assertThat(replayed.id()).isEqualTo(a1);
    nack("ord_halt", out, replayed, 0); // dead again
    await().atMost(5, SECONDS).until(() -> state("ord_halt", a1) == 3);
    assertThat(out.within(1000)).isEmpty();
    // Skipped: it is cancelled and a2 goes.
    assertThat(unfenced.skipDead(new EventRef(a1, 2), System.currentTimeMillis() * 1_000_000))
        .isEqualTo(dev.sluice.db.store.CasOutcome.APPLIED);
    Delivery next = out.next(8000);
    assertThat(next).isNotNull();
    assertThat(next.id()).isEqualTo(a2);
    assertThat(state("ord_halt", a1)).isEqualTo(4); // cancelled
    ack("ord_halt", out, next);
    assertThat(out.next(5000).id()).isEqualTo(a3);
    assertThat(unfenced.haltedKeys(10)).isEmpty();
    assertThat(a4).isGreaterThan(a3);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void aFutureHeadHoldsItsKeyAndCancellingItReleasesTheKey() throws Exception {
    queue("ord_future", "");
    CollectingOutlet out = subscribe("ord_future");
    long a1 = insert("ord_future", "A", 1, 3_600_000); // due in an hour
    long a2 = insert("ord_future", "A", 2);
    long b1 = insert("ord_future", "B", 1);
    assertThat(out.next(5000).id()).isEqualTo(b1);
    await().atMost(5, SECONDS).until(() -> held("ord_future") == 1);
    assertThat(out.within(500)).isEmpty();
    assertThat(engine.cancel("ord_future", "s1", List.of(a1)))
        .containsEntry(a1, dev.sluice.db.store.CasOutcome.APPLIED);
    Delivery next = out.next(8000);
    assertThat(next).isNotNull();
    assertThat(next.id()).isEqualTo(a2);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void anEventLeftInFlightByAnotherLeaderHoldsItsKeyUntilItTimesOut() throws Exception {
    // The rows as a leader that died left them: a1 fired, due back in 2 s; a2 pending.
    table("ord_takeover", "plain table, not a queue yet");
    long a1 = insert("ord_takeover", "A", 1);
    long a2 = insert("ord_takeover", "A", 2);
    db.exec(
        "UPDATE ord_takeover SET state = 1, epoch = 1, time_next = "
            + QueueConvention.NOW_NS_SQL
            + " + 2000000000 WHERE id = "
            + a1);
    db.exec(
        "ALTER TABLE ord_takeover COMMENT = 'sluice_queue ordering=key ordering_column=k"
            + " min_backoff=0s'");
    await().atMost(10, SECONDS).until(() -> engine.find("ord_takeover").isPresent());
    CollectingOutlet out = subscribe("ord_takeover");
    Delivery d = out.next(10_000);
    assertThat(d).isNotNull();
    assertThat(d.id()).as("the new leader waits for the head in flight").isEqualTo(a1);
    assertThat(d.epoch()).isEqualTo(2);
    ack("ord_takeover", out, d);
    assertThat(out.next(5000).id()).isEqualTo(a2);
    engine.unsubscribe(out, "test over");
  }

  @Test
  void turningOrderingOffReleasesTheHeldEvents() throws Exception {
    queue("ord_alter", "ack_wait=30s");
    CollectingOutlet out = subscribe("ord_alter");
    long a1 = insert("ord_alter", "A", 1);
    insert("ord_alter", "A", 2);
    insert("ord_alter", "A", 3);
    assertThat(out.next(5000).id()).isEqualTo(a1);
    await().atMost(5, SECONDS).until(() -> held("ord_alter") == 2);
    db.exec("ALTER TABLE ord_alter COMMENT = 'sluice_queue ordering=none ack_wait=30s'");
    // The queue restarts unordered: the held events go, alongside (a1 is released and resent).
    await()
        .atMost(15, SECONDS)
        .until(() -> out.got.stream().map(Delivery::id).distinct().count() >= 3);
    assertThat(held("ord_alter")).isZero();
    engine.unsubscribe(out, "test over");
  }

  @Test
  void turningOrderingOnMakesTheKeysEventsGoOneAtATimeFromThen() throws Exception {
    table("ord_on", "sluice_queue ack_wait=30s");
    await().atMost(10, SECONDS).until(() -> engine.find("ord_on").isPresent());
    CollectingOutlet out = subscribe("ord_on");
    long a1 = insert("ord_on", "A", 1);
    insert("ord_on", "A", 2);
    insert("ord_on", "A", 3);
    assertThat(out.take(3, 5000)).hasSize(3); // unordered: all at once
    db.exec(
        "ALTER TABLE ord_on COMMENT = 'sluice_queue ordering=key ordering_column=k ack_wait=30s'");
    // The restart releases the three; from then on one of key A at a time, a1 first.
    Delivery d = out.next(15_000);
    assertThat(d).isNotNull();
    assertThat(d.id()).isEqualTo(a1);
    assertThat(d.orderingKey()).isEqualTo("A");
    // a2 and a3 wait behind it (held), and nothing more comes.
    await().atMost(5, SECONDS).until(() -> held("ord_on") == 2);
    assertThat(out.within(500)).isEmpty();
    engine.unsubscribe(out, "test over");
  }

  @Test
  void aQueueOrderedAsOneKeyDeliversOneEventAtATime() throws Exception {
    String create =
        QueueConvention.createTableSql(
            "ord_queue",
            List.of(
                "`k` VARCHAR(64) NULL", "`n` INT NULL", "KEY `sluice_ordering` (`state`, `id`)"),
            "sluice_queue ordering=queue");
    db.exec(create);
    await().atMost(10, SECONDS).until(() -> engine.find("ord_queue").isPresent());
    CollectingOutlet out = subscribe("ord_queue");
    long e1 = insert("ord_queue", "A", 1);
    long e2 = insert("ord_queue", "B", 2);
    long e3 = insert("ord_queue", null, 3);
    List<Delivery> first = out.take(1, 5000);
    assertThat(first).extracting(Delivery::id).containsExactly(e1);
    // The other two wait behind it (held), and nothing more comes.
    await().atMost(5, SECONDS).until(() -> held("ord_queue") == 2);
    assertThat(out.within(500)).isEmpty();
    assertThat(first.get(0).orderingKey()).isEmpty();
    ack("ord_queue", out, first.get(0));
    Delivery second = out.next(5000);
    assertThat(second.id()).isEqualTo(e2);
    ack("ord_queue", out, second);
    assertThat(out.next(5000).id()).isEqualTo(e3);
    engine.unsubscribe(out, "test over");
  }

  /** The server's row updates so far ({@code Handler_update}, every session). */
  static long rowUpdates() throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        java.sql.ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE 'Handler_update'")) {
      assertThat(rs.next()).isTrue();
      return rs.getLong(2);
    }
  }

  @Test
  void aKeysBacklogIsReadAboutOnceNotAtEveryPoll() throws Exception {
    queue("ord_backlog", "ack_wait=30s");
    long updatesBefore = rowUpdates();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      StringBuilder sb = new StringBuilder("INSERT INTO ord_backlog (k, n) VALUES ");
      for (int i = 1; i <= 1000; i++) {
        sb.append(i == 1 ? "" : ",").append("('hot',").append(i).append(')');
      }
      s.execute(sb.toString());
      for (int i = 1; i <= 50; i++) {
        s.execute("INSERT INTO ord_backlog (k, n) VALUES ('q" + i + "', 1)");
      }
      c.commit();
    }
    CollectingOutlet out = subscribe("ord_backlog");
    int delivered = 0;
    int hot = 0;
    int lastHot = 0;
    long deadline = System.nanoTime() + SECONDS.toNanos(120);
    while (delivered < 1050 && System.nanoTime() < deadline) {
      Delivery d = out.next(5000);
      assertThat(d).as("delivered %d so far", delivered).isNotNull();
      if ("hot".equals(d.orderingKey())) {
        int n = ((Number) d.columns().get("n")).intValue();
        assertThat(n).isEqualTo(lastHot + 1);
        lastHot = n;
        hot++;
      }
      ack("ord_backlog", out, d);
      delivered++;
    }
    assertThat(hot).isEqualTo(1000);
    Counter polled = registry.find("sluice.poll.rows").tag("queue", "ord_backlog").counter();
    // Without holding, every poll would read the hot key's waiting rows again (hundreds each).
    assertThat(polled.count() / delivered).isLessThan(3.0);
    // A waiting row is written when held, fired and acked: its turn hands it to the window still
    // held, and the fire moves its time_next (a release first would be a fourth write, ~3.9).
    double updates = (double) (rowUpdates() - updatesBefore) / delivered;
    assertThat(updates).as("rows updated per delivered event").isLessThan(3.4);
    engine.unsubscribe(out, "test over");
  }
}
