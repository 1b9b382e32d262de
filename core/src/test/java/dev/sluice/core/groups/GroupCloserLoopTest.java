package dev.sluice.core.groups;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.QueueColumns;
import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.QueueEngine;
import dev.sluice.core.loop.FaultHook;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.GroupOutcome;
import dev.sluice.db.KeyRange;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.EventRef;
import dev.sluice.testkit.TestDatabase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The group closer's loop on a real database: a pass that fails (the groups cannot be read) is
 * counted among the shard's loop errors, and the closer goes on: once the table is back, its sweep
 * completes the group whose last child settled meanwhile, once.
 */
class GroupCloserLoopTest {
  static final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  static EngineHarness harness;
  static TestDatabase db;
  static QueueEngine engine;

  @BeforeAll
  static void start() throws Exception {
    harness =
        EngineHarness.fresh(GroupCloserLoopTest.class)
            .managerId("closer-loop-test")
            .poolSize(6)
            .registry(registry)
            .start();
    db = harness.db();
    engine = harness.engine();
    db.exec(
        QueueConvention.createTableSql(
            "l_kids",
            List.of(
                "`n` INT NULL",
                QueueColumns.GROUP_KEY_DEFINITION,
                QueueColumns.GROUP_INDEX_DEFINITION),
            "sluice_queue"));
    db.exec(
        QueueConvention.createTableSql(
            "l_done",
            List.of("`n` INT NULL", QueueColumns.COMPLETES_GROUP_DEFINITION),
            "sluice_queue"));
    harness.awaitQueue("l_kids");
    harness.awaitQueue("l_done");
  }

  @AfterAll
  static void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  /** {@code sluice_loop_errors_total} of the shard's event groups, or 0 before the first. */
  static double loopErrors() {
    Counter c =
        registry
            .find("sluice.loop.errors")
            .tags("shard", "s1", "queue", "", "loop", FaultHook.GROUPS)
            .counter();
    return c == null ? 0 : c.count();
  }

  static long longOf(String query) throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      return rs.next() ? rs.getLong(1) : -1;
    }
  }

  @Test
  void aFailingPassIsCountedAndTheCloserGoesOn() throws Exception {
    CollectingOutlet kids = new CollectingOutlet(100);
    CollectingOutlet done = new CollectingOutlet(100);
    engine.subscribe(kids, "l_kids", KeyRange.ALL);
    engine.subscribe(done, "l_done", KeyRange.ALL);
    try {
      db.exec("INSERT INTO l_kids (n, group_key) VALUES (1, 'k')");
      db.exec("INSERT INTO l_done (n, completes_group) VALUES (0, 'k')");
      Delivery kid = kids.next(20_000);
      assertThat(kid).as("the child delivered").isNotNull();
      await()
          .atMost(10, SECONDS)
          .until(() -> longOf("SELECT COUNT(*) FROM sluice_group WHERE state = 'sealed'") == 1);
      double before = loopErrors();

      db.exec("RENAME TABLE sluice_group TO sluice_group_away");
      try {
        // The child's ack is reported to the closer, whose check cannot read the group now; nor
        // can its sweep, every 2 s.
        engine.outcomes("l_kids", "s1").acked(kids, List.of(new EventRef(kid.id(), kid.epoch())));
        await().atMost(10, SECONDS).until(() -> loopErrors() >= before + 2);
        assertThat(longOf("SELECT state FROM l_kids WHERE id = " + kid.id())).isEqualTo(2);
        assertThat(done.got).isEmpty();
      } finally {
        db.exec("RENAME TABLE sluice_group_away TO sluice_group");
      }

      // The closer's loop went on: its next sweep completes the group.
      Delivery d = done.next(20_000);
      assertThat(d).as("the completion event delivered").isNotNull();
      assertThat(d.group()).isEqualTo(new GroupOutcome("k", 1, 0, 0));
      engine.outcomes("l_done", "s1").acked(done, List.of(new EventRef(d.id(), d.epoch())));
      await()
          .atMost(10, SECONDS)
          .until(() -> longOf("SELECT COUNT(*) FROM sluice_group WHERE state = 'completed'") == 1);
      await("delivered once").during(500, MILLISECONDS).until(() -> done.next(50) == null);
      assertThat(harness.shard().leading()).isTrue();
    } finally {
      engine.unsubscribe(kids, "test over");
      engine.unsubscribe(done, "test over");
    }
  }
}
