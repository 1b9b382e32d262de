package dev.sluice.core.groups;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.AckSql;
import dev.sluice.client.QueueColumns;
import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.GroupOutcome;
import dev.sluice.core.outlet.Nack;
import dev.sluice.db.KeyRange;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.EventRef;
import dev.sluice.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Event groups on a real database (README, "Event groups"): children in two queues and a completion
 * event in a third, inserted in one transaction; the completion event is delivered once, after the
 * last child settled, never before, with the counts.
 */
class EventGroupsTest {
  static EngineHarness harness;
  static TestDatabase db;
  static QueueEngine engine;
  static final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  static final AtomicInteger seq = new AtomicInteger();

  @BeforeAll
  static void start() throws Exception {
    harness =
        EngineHarness.fresh(EventGroupsTest.class)
            .managerId("groups-test")
            .poolSize(6)
            .registry(registry)
            .start();
    db = harness.db();
    engine = harness.engine();
    children("g_a", "");
    children("g_b", "");
    completions("g_done", "");
    completions("g_fast", "group_on_dead=fail_fast");
    children("g_once", "max_attempts=1");
  }

  @AfterAll
  static void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  static void children(String name, String options) throws Exception {
    db.exec(
        QueueConvention.createTableSql(
                name,
                List.of(
                    "`n` INT NULL",
                    QueueColumns.GROUP_KEY_DEFINITION,
                    QueueColumns.GROUP_INDEX_DEFINITION),
                "sluice_queue")
            .replace("COMMENT='sluice_queue'", "COMMENT='sluice_queue " + options + "'"));
    harness.awaitQueue(name);
  }

  static void completions(String name, String options) throws Exception {
    db.exec(
        QueueConvention.createTableSql(
                name,
                List.of("`n` INT NULL", QueueColumns.COMPLETES_GROUP_DEFINITION),
                "sluice_queue")
            .replace("COMMENT='sluice_queue'", "COMMENT='sluice_queue " + options + "'"));
    harness.awaitQueue(name);
  }

  static String newKey() {
    return "grp-" + seq.incrementAndGet();
  }

  /**
   * In one transaction: {@code perQueue[i]} children in {@code queues[i]} of group {@code key},
   * then its completion event in {@code done} (when not null); committed or rolled back.
   */
  static List<Long> group(String key, String done, boolean commit, Object... queuesAndCounts)
      throws Exception {
    List<Long> ids = new ArrayList<>();
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      for (int i = 0; i < queuesAndCounts.length; i += 2) {
        String q = (String) queuesAndCounts[i];
        int n = (Integer) queuesAndCounts[i + 1];
        for (int k = 0; k < n; k++) {
          ids.add(insert(c, q, "group_key", key, k));
        }
      }
      if (done != null) {
        ids.add(insert(c, done, "completes_group", key, -1));
      }
      if (commit) {
        c.commit();
      } else {
        c.rollback();
      }
    }
    return ids;
  }

  static long insert(Connection c, String queue, String column, String key, int n)
      throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO " + queue + " (n, " + column + ") VALUES (?, ?)",
            Statement.RETURN_GENERATED_KEYS)) {
      ps.setInt(1, n);
      ps.setString(2, key);
      ps.executeUpdate();
      try (ResultSet rs = ps.getGeneratedKeys()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  static CollectingOutlet subscribe(String queue) {
    CollectingOutlet out = new CollectingOutlet(1000);
    engine.subscribe(out, queue, KeyRange.ALL);
    return out;
  }

  static void ack(String queue, CollectingOutlet out, Delivery d) {
    engine.outcomes(queue, "s1").acked(out, List.of(new EventRef(d.id(), d.epoch())));
  }

  static List<Delivery> take(CollectingOutlet out, int n) throws Exception {
    List<Delivery> got = new ArrayList<>();
    long end = System.nanoTime() + SECONDS.toNanos(20);
    while (got.size() < n && System.nanoTime() < end) {
      Delivery d = out.next(200);
      if (d != null) {
        got.add(d);
      }
    }
    assertThat(got).hasSize(n);
    return got;
  }

  static boolean held(String queue, long id) throws Exception {
    return longOf(
            "SELECT time_next >= "
                + QueueConvention.HELD_NS
                + " FROM "
                + queue
                + " WHERE id = "
                + id)
        == 1;
  }

  static String groupState(String key) throws Exception {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT state FROM sluice_group WHERE group_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  static long longOf(String query) throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The completion event's delivery, asserting that it is the only one of {@code done}. */
  static Delivery completion(CollectingOutlet done, long id) throws Exception {
    Delivery d = done.next(20_000);
    assertThat(d).as("completion event delivered").isNotNull();
    assertThat(d.id()).isEqualTo(id);
    return d;
  }

  @Test
  void theCompletionComesOnceAfterTheLastChildAcrossTwoQueuesNeverBefore() throws Exception {
    CollectingOutlet a = subscribe("g_a");
    CollectingOutlet b = subscribe("g_b");
    CollectingOutlet done = subscribe("g_done");
    try {
      String key = newKey();
      List<Long> ids = group(key, "g_done", true, "g_a", 3, "g_b", 2);
      long completionId = ids.get(ids.size() - 1);
      List<Delivery> children = new ArrayList<>(take(a, 3));
      children.addAll(take(b, 2));
      await().atMost(10, SECONDS).until(() -> held("g_done", completionId));
      assertThat(groupState(key)).isEqualTo("sealed");
      // Every child but the last acked: the completion event stays held.
      for (int i = 0; i < children.size() - 1; i++) {
        Delivery d = children.get(i);
        ack(d.queue(), d.queue().equals("g_a") ? a : b, d);
      }
      await()
          .atMost(10, SECONDS)
          .until(
              () ->
                  longOf("SELECT COUNT(*) FROM g_a WHERE state = 2")
                          + longOf("SELECT COUNT(*) FROM g_b WHERE state = 2")
                      >= 4);
      // The sweep runs every 2 s: through one (2.5 s), the group keeps waiting for its last child.
      // (A sweep is not observable from here: no count of passes to wait for.)
      await("the completion event stays held while a child is out")
          .during(2500, MILLISECONDS)
          .atMost(5, SECONDS)
          .until(() -> done.got.isEmpty() && held("g_done", completionId));
      Delivery last = children.get(children.size() - 1);
      ack(last.queue(), last.queue().equals("g_a") ? a : b, last);

      Delivery d = completion(done, completionId);
      assertThat(d.group()).isEqualTo(new GroupOutcome(key, 5, 0, 0));
      assertThat(d.columns()).containsEntry("completes_group", key);
      ack("g_done", done, d);
      await().atMost(10, SECONDS).until(() -> "completed".equals(groupState(key)));
      assertThat(done.next(500)).isNull();
    } finally {
      engine.unsubscribe(a, "test over");
      engine.unsubscribe(b, "test over");
      engine.unsubscribe(done, "test over");
    }
  }

  @Test
  void aRolledBackGroupLeavesNothingAndAnEmptyGroupCompletesAtOnce() throws Exception {
    CollectingOutlet a = subscribe("g_a");
    CollectingOutlet done = subscribe("g_done");
    try {
      String gone = newKey();
      group(gone, "g_done", false, "g_a", 3);
      String empty = newKey();
      List<Long> ids = group(empty, "g_done", true);
      Delivery d = completion(done, ids.get(0));
      assertThat(d.group()).isEqualTo(new GroupOutcome(empty, 0, 0, 0));
      ack("g_done", done, d);
      assertThat(groupState(gone)).isNull();
      assertThat(longOf("SELECT COUNT(*) FROM g_a WHERE group_key = '" + gone + "'")).isZero();
      assertThat(a.got).isEmpty();
    } finally {
      engine.unsubscribe(a, "test over");
      engine.unsubscribe(done, "test over");
    }
  }

  @Test
  void concurrentAcksOnEightReceiversCompleteTheGroupOnce() throws Exception {
    List<CollectingOutlet> receivers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      receivers.add(subscribe("g_b"));
    }
    CollectingOutlet done = subscribe("g_done");
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      String key = newKey();
      List<Long> ids = group(key, "g_done", true, "g_b", 400);
      long completionId = ids.get(ids.size() - 1);
      AtomicInteger acked = new AtomicInteger();
      List<Future<?>> running = new ArrayList<>();
      for (CollectingOutlet r : receivers) {
        running.add(
            pool.submit(
                () -> {
                  long end = System.nanoTime() + SECONDS.toNanos(30);
                  while (acked.get() < 400 && System.nanoTime() < end) {
                    Delivery d = r.next(50);
                    if (d != null) {
                      ack("g_b", r, d);
                      acked.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : running) {
        f.get(40, SECONDS);
      }
      assertThat(acked.get()).isEqualTo(400);
      Delivery d = completion(done, completionId);
      assertThat(d.group()).isEqualTo(new GroupOutcome(key, 400, 0, 0));
      ack("g_done", done, d);
      assertThat(done.next(500)).isNull();
    } finally {
      pool.shutdownNow();
      for (CollectingOutlet r : receivers) {
        engine.unsubscribe(r, "test over");
      }
      engine.unsubscribe(done, "test over");
    }
  }

  @Test
  void transactionalAcksAndAcksWrittenByOthersCountOnce() throws Exception {
    CollectingOutlet a = subscribe("g_a");
    CollectingOutlet done = subscribe("g_done");
    try {
      String key = newKey();
      List<Long> ids = group(key, "g_done", true, "g_a", 3);
      long completionId = ids.get(ids.size() - 1);
      List<Delivery> children = take(a, 3);
      // Two acked in the receivers' own transactions (the SDK's statement), then reported.
      for (Delivery d : children.subList(0, 2)) {
        try (Connection c = db.connect()) {
          c.setAutoCommit(false);
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE g_a SET "
                      + AckSql.set("2", QueueColumns.NOW_NS_SQL)
                      + " WHERE "
                      + AckSql.guard(1, "1"))) {
            ps.setLong(1, d.id());
            ps.setLong(2, d.epoch());
            assertThat(ps.executeUpdate()).isEqualTo(1);
          }
          c.commit();
        }
        engine.outcomes("g_a", "s1").committed(a, List.of(new EventRef(d.id(), d.epoch())));
        // An ack of the same attempt afterwards is stale: it counts nothing.
        ack("g_a", a, d);
      }
      // The last: acked by a writer the manager never hears from (a leader killed after its
      // ack committed and before it checked the group): the sweep completes the group.
      Delivery last = children.get(2);
      db.exec(
          "UPDATE g_a SET "
              + AckSql.set("2", QueueColumns.NOW_NS_SQL)
              + " WHERE id = "
              + last.id()
              + " AND state = 1 AND epoch = "
              + last.epoch());
      Delivery d = completion(done, completionId);
      assertThat(d.group()).isEqualTo(new GroupOutcome(key, 3, 0, 0));
      ack("g_done", done, d);
    } finally {
      engine.unsubscribe(a, "test over");
      engine.unsubscribe(done, "test over");
    }
  }

  @Test
  void aDeadChildIsCountedAndWaitedPastOrCompletesAtOnceWithFailFast() throws Exception {
    CollectingOutlet once = subscribe("g_once");
    CollectingOutlet done = subscribe("g_done");
    CollectingOutlet fast = subscribe("g_fast");
    try {
      // wait_all: one child dies, the other is acked later; the completion comes after both.
      String waitAll = newKey();
      List<Long> w = group(waitAll, "g_done", true, "g_once", 2);
      List<Delivery> wc = take(once, 2);
      nack(once, wc.get(0));
      await()
          .atMost(10, SECONDS)
          .until(() -> longOf("SELECT state FROM g_once WHERE id = " + wc.get(0).id()) == 3);
      // Through a sweep (every 2 s): no completion while the other child is out.
      await("no completion while a child is out")
          .during(2500, MILLISECONDS)
          .atMost(5, SECONDS)
          .until(() -> done.got.isEmpty());
      ack("g_once", once, wc.get(1));
      Delivery dw = completion(done, w.get(w.size() - 1));
      assertThat(dw.group()).isEqualTo(new GroupOutcome(waitAll, 1, 1, 0));
      ack("g_done", done, dw);

      // fail_fast: one child dies while the other is still out: the completion comes at once.
      String failFast = newKey();
      List<Long> f = group(failFast, "g_fast", true, "g_once", 2);
      List<Delivery> fc = take(once, 2);
      nack(once, fc.get(0));
      Delivery df = completion(fast, f.get(f.size() - 1));
      assertThat(df.group()).isEqualTo(new GroupOutcome(failFast, 0, 1, 0));
      assertThat(longOf("SELECT state FROM g_once WHERE id = " + fc.get(1).id())).isEqualTo(1);
      ack("g_fast", fast, df);
      ack("g_once", once, fc.get(1));
    } finally {
      engine.unsubscribe(once, "test over");
      engine.unsubscribe(done, "test over");
      engine.unsubscribe(fast, "test over");
    }
  }

  static void nack(CollectingOutlet from, Delivery d) {
    engine
        .outcomes(d.queue(), "s1")
        .nacked(
            from,
            List.of(new Nack(new EventRef(d.id(), d.epoch()), MILLISECONDS.toNanos(0), "no")));
  }

  /**
   * The completion events of thirty groups committed together are read by one poll and their groups
   * sealed together (one transaction); each group completes once with its own counts, the empty
   * ones at once, the others after their child.
   */
  @Test
  void groupsSealedTogetherEachCompleteOnce() throws Exception {
    CollectingOutlet a = subscribe("g_a");
    CollectingOutlet done = subscribe("g_done");
    try {
      List<String> keys = new ArrayList<>();
      java.util.Map<Long, String> byCompletion = new java.util.HashMap<>();
      try (Connection c = db.connect()) {
        c.setAutoCommit(false);
        for (int i = 0; i < 30; i++) {
          String key = newKey();
          keys.add(key);
          if (i % 2 == 0) {
            insert(c, "g_a", "group_key", key, i);
          }
          byCompletion.put(insert(c, "g_done", "completes_group", key, -1), key);
        }
        c.commit();
      }
      List<Delivery> children = take(a, 15);
      List<Delivery> first = new ArrayList<>();
      for (int i = 0; i < 15; i++) {
        first.add(done.next(10_000));
      }
      assertThat(first)
          .as("the empty groups complete at once, the others wait for their child")
          .allSatisfy(d -> assertThat(d.group().acked()).isZero());
      for (Delivery d : first) {
        ack("g_done", done, d);
      }
      for (Delivery child : children) {
        ack("g_a", a, child);
      }
      List<Delivery> rest = new ArrayList<>();
      for (int i = 0; i < 15; i++) {
        Delivery d = done.next(10_000);
        assertThat(d).isNotNull();
        rest.add(d);
        ack("g_done", done, d);
      }
      assertThat(rest).allSatisfy(d -> assertThat(d.group().acked()).isEqualTo(1));
      List<String> completed = new ArrayList<>();
      first.forEach(d -> completed.add(byCompletion.get(d.id())));
      rest.forEach(d -> completed.add(byCompletion.get(d.id())));
      assertThat(completed).as("each group once").containsExactlyInAnyOrderElementsOf(keys);
      assertThat(done.next(300)).isNull();
    } finally {
      engine.unsubscribe(a, "test over");
      engine.unsubscribe(done, "test over");
    }
  }

  @Test
  void aSecondCompletionEventOfAGroupIsDeadAndALateChildIsAnOrdinaryEvent() throws Exception {
    CollectingOutlet a = subscribe("g_a");
    CollectingOutlet done = subscribe("g_done");
    try {
      String key = newKey();
      List<Long> ids = group(key, "g_done", true, "g_a", 1);
      Delivery child = take(a, 1).get(0);
      ack("g_a", a, child);
      Delivery d = completion(done, ids.get(ids.size() - 1));
      ack("g_done", done, d);
      // After the completion: a child of the same key is delivered as any event, and a second
      // completion event of the key is made dead with the reason.
      List<Long> late = group(key, "g_done", true, "g_a", 1);
      Delivery lateChild = take(a, 1).get(0);
      assertThat(lateChild.id()).isEqualTo(late.get(0));
      ack("g_a", a, lateChild);
      long second = late.get(1);
      await()
          .atMost(10, SECONDS)
          .until(() -> longOf("SELECT state FROM g_done WHERE id = " + second) == 3);
      assertThat(done.next(300)).isNull();
    } finally {
      engine.unsubscribe(a, "test over");
      engine.unsubscribe(done, "test over");
    }
  }
}
