package dev.sluice.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a JUnit 5 test class against a fresh database with Sluice's migrations and yours applied,
 * and a real Sluice manager in the same JVM on a free loopback port; started before the class's
 * first test (or its constructor), stopped after its last. {@link
 * org.junit.jupiter.api.Nested @Nested} classes share their enclosing class's.
 *
 * <p>Test methods, constructors and lifecycle methods ({@code @BeforeAll}, {@code @BeforeEach},
 * ...) can declare parameters of these types:
 *
 * <ul>
 *   <li>{@link SluiceExtension}: the handle to everything, with {@code insert}, {@code receive},
 *       {@code awaitAcked}, {@code awaitDead}, {@code event}, {@code target()} and more;
 *   <li>{@link SluiceDatabase}: the database's JDBC URL, user and password;
 *   <li>{@link javax.sql.DataSource}: a small connection pool on that database, for code under test
 *       that writes its rows and its events in one transaction;
 *   <li>{@link dev.sluice.manager.SluiceServer}: the in-process manager;
 *   <li>{@link RecordingReceiver} annotated {@link Receive @Receive("queue")}: a receiver of that
 *       queue on the manager that records and acks every delivery; closed after the method it was
 *       given to (after the class, when given to a constructor or a {@code @BeforeAll} method).
 * </ul>
 *
 * <p>Asking for another type from Sluice's packages, or for a {@link java.sql.Connection}, fails
 * the test with a message listing the types above.
 *
 * <pre>{@code
 * @SluiceTest(migrations = "classpath:db/migration")
 * class OrdersTest {
 *   @Test
 *   void placedOrderIsShipped(DataSource db, @Receive("order_events") RecordingReceiver shipping,
 *       SluiceExtension sluice) throws SQLException {
 *     long id;
 *     try (Connection c = db.getConnection()) {
 *       c.setAutoCommit(false);
 *       // ... the order's own rows ...
 *       id = EventProducer.insert(c, "order_events", Map.of("order_id", 42));
 *       c.commit();
 *     }
 *     sluice.awaitAcked("order_events", id);
 *     assertThat(shipping.delivered()).extracting(ReceivedEvent::id).containsExactly(id);
 *   }
 * }
 * }</pre>
 *
 * <p>The database is chosen as for {@link SluiceExtension}: {@code SLUICE_TEST_JDBC_URL} when set,
 * else a container when Testcontainers and Docker are there, else the embedded MariaDB (Linux
 * x86-64). Use either this annotation or a {@code @RegisterExtension SluiceExtension} field on a
 * class, not both: the field's extension injects the same parameters.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(SluiceTestExtension.class)
public @interface SluiceTest {
  /** Alias of {@link #migrations()}: {@code @SluiceTest("classpath:db/migration")}. */
  String[] value() default {};

  /**
   * Flyway locations of your migrations (those that create your queue tables), e.g. {@code
   * classpath:db/migration}; applied after Sluice's own. The manager serves every queue table found
   * before the first test starts.
   */
  String[] migrations() default {};

  /** How long the {@code await} methods wait, e.g. {@code 10s}: ms, s, m, h or d. */
  String timeout() default "30s";

  /** How often the manager looks for new queue tables, e.g. {@code 200ms}. */
  String discoveryInterval() default "200ms";
}
