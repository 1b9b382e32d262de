package dev.sluice.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.receiver.ReceiverStats;
import dev.sluice.spring.EventMetadata;
import dev.sluice.spring.SluiceConnectionDetails;
import dev.sluice.spring.SluiceHealthIndicator;
import dev.sluice.spring.SluiceListener;
import dev.sluice.spring.SluiceListenerContainer;
import dev.sluice.spring.SluiceProducer;
import dev.sluice.test.EventSnapshot;
import dev.sluice.test.SluiceExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.math.BigDecimal;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The shop example, started as an application against a real database (the test kit's: embedded
 * MariaDB, or SLUICE_TEST_JDBC_URL) and a real in-process Sluice manager.
 */
@SpringBootTest(
    classes = {
      ShopApplication.class,
      ShopApplicationTest.FlakyAudit.class,
      ShopApplicationTest.SlowListener.class,
      ShopApplicationTest.ManagerConnection.class
    })
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShopApplicationTest {
  @RegisterExtension
  static SluiceExtension sluice =
      SluiceExtension.builder()
          .migrations("classpath:db/migration", "classpath:db/testqueues")
          .build();

  @DynamicPropertySource
  static void sluiceProperties(DynamicPropertyRegistry r) {
    r.add("spring.datasource.url", sluice::jdbcUrl);
    r.add("spring.datasource.username", () -> sluice.database().user());
    r.add("spring.datasource.password", () -> sluice.database().password());
    r.add("sluice.receiver.shutdown-timeout", () -> "5s");
    // Spring Boot's Flyway finds them applied by the extension (as in production, where it applies
    // them itself).
    r.add("spring.flyway.locations", () -> "classpath:db/migration,classpath:db/testqueues");
  }

  @Autowired Orders orders;
  @Autowired JdbcTemplate jdbc;
  @Autowired DataSource dataSource;
  @Autowired TransactionTemplate tx;
  @Autowired SluiceProducer producer;
  @Autowired SluiceListenerContainer listeners;
  @Autowired SluiceHealthIndicator health;
  @Autowired MeterRegistry meters;

  long eventOf(long orderId) {
    return jdbc.queryForObject(
        "SELECT id FROM order_events WHERE order_id = ?", Long.class, orderId);
  }

  long count(String sql, Object... args) {
    return jdbc.queryForObject(sql, Long.class, args);
  }

  @Test
  void aCommittedOrderIsShippedOnce() {
    long orderId = orders.place("alice", new BigDecimal("12.50"));

    EventSnapshot acked = sluice.awaitAcked("order_events", eventOf(orderId));
    assertThat(acked.tenant()).isEqualTo("alice");
    assertThat(acked.attempts()).isEqualTo(1);
    assertThat(count("SELECT COUNT(*) FROM shipments WHERE order_id = ?", orderId)).isEqualTo(1);
    assertThat(count("SELECT attempt FROM shipments WHERE order_id = ?", orderId)).isEqualTo(1);
  }

  @Test
  void aRolledBackOrderIsNeverDelivered() {
    Throwable failure = catchThrowable(() -> orders.place("mallory", BigDecimal.ZERO));
    assertThat(failure).isInstanceOf(IllegalArgumentException.class);
    long rolledBack = orderIdIn(failure.getMessage());
    // A committed order of the same tenant, after it: once it is shipped, the queue has moved past
    // the point where the rolled-back event would have been.
    long committed = orders.place("mallory", new BigDecimal("5.00"));
    sluice.awaitAcked("order_events", eventOf(committed));

    assertThat(count("SELECT COUNT(*) FROM orders WHERE id = ?", rolledBack)).isZero();
    assertThat(count("SELECT COUNT(*) FROM order_events WHERE order_id = ?", rolledBack))
        .as("the event rolled back with the order")
        .isZero();
    assertThat(count("SELECT COUNT(*) FROM shipments WHERE customer = 'mallory'")).isEqualTo(1);
    // Every handling the listener ran is an attempt of an event in the table: none of a ghost.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(handlings("order_events"))
                    .isEqualTo(count("SELECT COALESCE(SUM(epoch), 0) FROM order_events")));
  }

  long orderIdIn(String message) {
    Matcher m = Pattern.compile("order (\\d+):").matcher(message);
    assertThat(m.find()).as(message).isTrue();
    return Long.parseLong(m.group(1));
  }

  @Test
  void aConnectionTakenFromTheDataSourceCommitsTheEventOnItsOwn() throws Exception {
    // The failure the producer fixes: dataSource.getConnection() inside a transaction is another
    // connection, in auto-commit, so its event survives the rollback...
    long[] naive = new long[1];
    tx.executeWithoutResult(
        status -> {
          try (Connection c = dataSource.getConnection()) {
            // Due in an hour, so that the listener never sees this stray event.
            naive[0] =
                EventProducer.insert(
                    c,
                    "order_events",
                    Map.of("order_id", -1, "payload", "{}"),
                    EventProducer.EventOptions.builder().delay(Duration.ofHours(1)).build());
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
          status.setRollbackOnly();
        });
    assertThat(count("SELECT COUNT(*) FROM order_events WHERE id = ?", naive[0])).isEqualTo(1);
    jdbc.update("UPDATE order_events SET state = 4 WHERE id = ? AND state = 0", naive[0]); // cancel
    // ...while SluiceProducer joins the transaction and rolls back with it.
    long[] joined = new long[1];
    tx.executeWithoutResult(
        status -> {
          joined[0] =
              producer
                  .to("order_events")
                  .delay(Duration.ofHours(1))
                  .column("order_id", -2)
                  .column("payload", "{}")
                  .send();
          status.setRollbackOnly();
        });
    assertThat(count("SELECT COUNT(*) FROM order_events WHERE id = ?", joined[0])).isZero();
  }

  @Test
  void theProducerRefusesToInsertOutsideATransaction() {
    assertThatThrownBy(() -> producer.send("order_events", Map.of("order_id", 1, "payload", "{}")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no Spring transaction is active");
  }

  @Test
  void aListenerThatFailsAfterItsAckIsRetriedAndWritesOnce() {
    long id = sluice.insert("audit_events", Map.of("audit_subject", "refund-7"));

    EventSnapshot acked = sluice.awaitAcked("audit_events", id);
    assertThat(acked.attempts()).as("the first commit failed").isEqualTo(2);
    assertThat(count("SELECT COUNT(*) FROM audit_log WHERE subject = 'refund-7'")).isEqualTo(1);
    assertThat(count("SELECT attempt FROM audit_log WHERE subject = 'refund-7'")).isEqualTo(2);
    ReceiverStats stats = listeners.stats().get("audit_events");
    assertThat(stats.acked()).isEqualTo(1);
    assertThat(stats.nacked()).isEqualTo(1);
    assertThat(stats.ackStale()).isZero();
  }

  @Test
  void healthAndMetersReportTheListeners() {
    long orderId = orders.place("bob", new BigDecimal("1.00"));
    sluice.awaitAcked("order_events", eventOf(orderId));

    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> health.health().getStatus().equals(Status.UP));
    Health h = health.health();
    assertThat(h.getDetails().get("listeners").toString()).contains("order_events", "audit_events");
    Timer acks =
        meters
            .find("sluice.receiver.handling")
            .tags("queue", "order_events", "outcome", "acked")
            .timer();
    assertThat(acks).isNotNull();
    assertThat(acks.count()).isPositive();
    assertThat(meters.find("sluice.receiver.in.flight").tag("queue", "order_events").gauge())
        .isNotNull();
    assertThat(
            meters
                .find("sluice.receiver.acks")
                .tag("queue", "order_events")
                .functionCounter()
                .count())
        .isPositive();
  }

  @Test
  @Order(Integer.MAX_VALUE) // last: it stops the listeners (and starts them again)
  void stoppingWaitsForTheRunningHandlerAndDeliversItsAck() throws Exception {
    long id = sluice.insert("slow_events", Map.of("label", "slow"));
    assertThat(SlowListener.started.await(20, TimeUnit.SECONDS)).isTrue();

    CompletableFuture<Void> stopped = new CompletableFuture<>();
    Thread stopper = new Thread(() -> listeners.stop(() -> stopped.complete(null)), "test-stop");
    stopper.start();
    assertThat(stopped).as("the stop waits for the running handler").isNotDone();
    SlowListener.release.countDown();
    stopped.get(20, TimeUnit.SECONDS);

    assertThat(listeners.isRunning()).isFalse();
    EventSnapshot acked = sluice.awaitAcked("slow_events", id);
    assertThat(acked.attempts()).as("handled once, acked before the stop ended").isEqualTo(1);
    assertThat(SlowListener.labels).containsExactly("slow");
    assertThat(health.health().getStatus()).isEqualTo(Status.UNKNOWN);

    listeners.start();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> health.health().getStatus().equals(Status.UP));
  }

  /**
   * The test's manager, as service-connection details: the starter prefers them to {@code
   * sluice.receiver.targets}.
   */
  @TestConfiguration
  static class ManagerConnection {
    @Bean
    SluiceConnectionDetails sluiceConnectionDetails() {
      return () -> List.of(sluice.target());
    }
  }

  /** Blocks in its handler until the test lets it go. */
  @TestConfiguration
  static class SlowListener {
    static final CountDownLatch started = new CountDownLatch(1);
    static final CountDownLatch release = new CountDownLatch(1);
    static final List<Object> labels = new CopyOnWriteArrayList<>();

    @Bean
    Object slowListener() {
      return new Object() {
        @SluiceListener(queue = "slow_events", concurrency = 1)
        public void on(Map<String, Object> columns) throws InterruptedException {
          labels.add(columns.get("label"));
          started.countDown();
          release.await();
        }
      };
    }
  }

  double handlings(String queue) {
    return meters.find("sluice.receiver.handling").tag("queue", queue).timers().stream()
        .mapToDouble(Timer::count)
        .sum();
  }

  /** A second listener, for the tests only: its first attempt fails after writing and acking. */
  @TestConfiguration
  static class FlakyAudit {
    record AuditEntry(String auditSubject) {}

    @Bean
    Object flakyAuditListener(JdbcTemplate jdbc) {
      return new Object() {
        @SluiceListener(queue = "audit_events", transactional = true, concurrency = 1)
        public void on(AuditEntry entry, EventMetadata meta) {
          jdbc.update(
              "INSERT INTO audit_log (subject, attempt) VALUES (?, ?)",
              entry.auditSubject(),
              meta.attempt());
          if (meta.attempt() == 1) {
            TransactionSynchronizationManager.registerSynchronization(
                new TransactionSynchronization() {
                  @Override
                  public void beforeCommit(boolean readOnly) {
                    throw new IllegalStateException("crash before commit");
                  }
                });
          }
        }
      };
    }
  }
}
