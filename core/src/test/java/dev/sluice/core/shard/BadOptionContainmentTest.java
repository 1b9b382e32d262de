package dev.sluice.core.shard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.CollectingOutlet;
import dev.sluice.core.EngineHarness;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.db.QueueConvention;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A comment whose value overflows or exceeds an option's bound disables that one table, naming the
 * table, option, value and limit; every other queue of the shard is still discovered and served,
 * also after the engine is started again.
 */
class BadOptionContainmentTest {
  static TestDatabase db;
  static EngineHarness h;

  @BeforeAll
  static void start() throws Exception {
    db = TestDatabases.fresh(BadOptionContainmentTest.class);
    table("good_q", "sluice_queue");
    table("huge_q", "sluice_queue ack_wait=999999999999999d");
    table("long_q", "sluice_queue ack_wait=100000d");
    table("cache_q", "sluice_queue cache_size=2000000000");
    h = started();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static EngineHarness started() {
    return EngineHarness.on(db).managerId("bad-option-test").start();
  }

  /** A conforming table with any comment, even one whose options are out of bounds. */
  static void table(String name, String comment) throws Exception {
    db.exec(
        QueueConvention.createTableSql(name, List.of("`order_id` BIGINT NULL"), "sluice_queue")
            .replace("COMMENT='sluice_queue'", "COMMENT='" + comment + "'"));
  }

  static String problem(String queue) {
    return h.engine().problem(queue).orElse(null);
  }

  /** An event inserted into {@code queue} reaches an outlet subscribed to it, and is acked. */
  static void delivers(String queue, long orderId) throws Exception {
    CollectingOutlet out = h.subscribe(queue, 1);
    db.exec("INSERT INTO " + queue + " (order_id) VALUES (" + orderId + ")");
    Delivery d = out.next(10_000);
    assertThat(d).as("an event of " + queue + " is delivered").isNotNull();
    assertThat(d.columns()).containsEntry("order_id", orderId);
    h.ack(queue, out, d);
    h.engine().unsubscribe(out, "test over");
  }

  @Test
  void overflowingAndOutOfBoundOptionsDisableOnlyTheirTable() throws Exception {
    h.awaitQueue("good_q");
    await().atMost(10, SECONDS).until(() -> h.shard().disabled().size() == 3);
    assertThat(h.engine().served()).extracting(q -> q.queue()).containsExactly("good_q");
    assertThat(problem("good_q")).isNull();
    assertThat(problem("huge_q"))
        .contains("huge_q")
        .contains("ack_wait")
        .contains("999999999999999d")
        .contains("at most 1d")
        .contains("ack_wait=999999999999999d is too large: at most 1d");
    assertThat(problem("long_q"))
        .contains("long_q")
        .contains("ack_wait=100000d")
        .contains("at most 1d");
    assertThat(problem("cache_q")).contains("cache_size=2000000000").contains("at most 1000000");
    assertThat(h.registry().get("sluice.queues.disabled").gauge().value()).isEqualTo(3.0);
    assertThat(h.registry().get("sluice.queue.config.errors").counter().count())
        .isGreaterThanOrEqualTo(3);
    delivers("good_q", 1);

    // A queue created after the bad ones is found and served.
    table("late_q", "sluice_queue");
    h.awaitQueue("late_q");
    delivers("late_q", 2);

    // And after a restart, every good queue of the shard is served again.
    h.close();
    h = started();
    h.awaitQueue("late_q");
    h.awaitQueue("good_q");
    await().atMost(10, SECONDS).until(() -> h.shard().disabled().size() == 3);
    assertThat(problem("huge_q")).contains("at most 1d");
    delivers("good_q", 3);
  }
}
