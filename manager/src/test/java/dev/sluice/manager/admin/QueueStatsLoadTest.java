package dev.sluice.manager.admin;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.proto.v1.QueueStatsRequest;
import dev.sluice.proto.v1.QueueStatsResponse;
import dev.sluice.proto.v1.SluiceGrpc;
import io.grpc.stub.StreamObserver;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * QueueStats needs no credentials, and its counts scan the table: however many callers ask at once,
 * a queue's table is counted by one query at a time, and at most once a second.
 */
class QueueStatsLoadTest {
  static Harness h;

  @BeforeAll
  static void start() {
    h = new Harness(QueueStatsLoadTest.class);
    h.startManager();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  /** The GROUP BY state queries on {@code table} running now (blocked ones included). */
  static long countQueries(String table) throws Exception {
    return h.queryLong(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE()"
            + " AND INFO LIKE ? AND INFO LIKE '%group by%' AND ID <> CONNECTION_ID()",
        "%" + table + "%");
  }

  @Test
  void manyCallersAtOnceCostOneCountOfTheTable() throws Exception {
    h.createQueue("stats_q", "");
    await().atMost(10, SECONDS).until(() -> h.server().engine().find("stats_q").isPresent());
    h.exec("INSERT INTO stats_q (order_id) VALUES (1)");
    int callers = 20;
    CountDownLatch answered = new CountDownLatch(callers);
    try (Connection lock = h.connect();
        Statement s = lock.createStatement()) {
      // Every read of the table waits while this lock is held: the counts pile up in plain view.
      s.execute("LOCK TABLES stats_q WRITE");
      SluiceGrpc.SluiceStub stub =
          SluiceGrpc.newStub(h.channel())
              .withDeadlineAfter(30, java.util.concurrent.TimeUnit.SECONDS);
      for (int i = 0; i < callers; i++) {
        stub.queueStats(
            QueueStatsRequest.newBuilder().setQueue("stats_q").build(),
            new StreamObserver<QueueStatsResponse>() {
              @Override
              public void onNext(QueueStatsResponse r) {}

              @Override
              public void onError(Throwable t) {
                answered.countDown();
              }

              @Override
              public void onCompleted() {
                answered.countDown();
              }
            });
      }
      await().atMost(10, SECONDS).until(() -> countQueries("stats_q") >= 1);
      // One for the callers, and one for the status sampler if its turn came meanwhile.
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(3))
          .until(() -> countQueries("stats_q") <= 2);
      s.execute("UNLOCK TABLES");
    }
    assertThat(answered.await(20, SECONDS)).isTrue();
  }
}
