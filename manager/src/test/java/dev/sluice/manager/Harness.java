package dev.sluice.manager;

import static org.awaitility.Awaitility.await;

import dev.sluice.core.config.ShardConfig;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real database (one per test class) and a real manager on a loopback gRPC port. The session time
 * zone of test connections is not UTC on purpose: Sluice's times must not depend on it.
 */
public final class Harness implements AutoCloseable {
  public final TestDatabase db;

  /** Prometheus, as {@code sluice serve} uses, so that /metrics answers in tests too. */
  public final MeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

  private final List<AutoCloseable> closers = new ArrayList<>();
  private SluiceServer server;
  private ManagedChannel channel;

  public Harness(Class<?> testClass) {
    this.db = TestDatabases.fresh(testClass);
  }

  /** The shard's JDBC URL, with a non-UTC session time zone. */
  public String url() {
    String sep = db.url().contains("?") ? "&" : "?";
    return db.url() + sep + "connectionTimeZone=SERVER&sessionVariables=time_zone='-07:00'";
  }

  public Connection connect() throws SQLException {
    return db.connect();
  }

  /** Creates a queue table by the convention, with an order_id and payload column. */
  public void createQueue(String name, String options) throws SQLException {
    exec(
        QueueConvention.createTableSql(
            name,
            List.of("`order_id` BIGINT NULL", "`payload` VARCHAR(255) NULL"),
            ("sluice_queue " + options).strip()));
  }

  /** {@link #createQueue}, then waits (up to 10 s) until the running manager serves it. */
  public void createServedQueue(String name, String options) throws SQLException {
    createQueue(name, options);
    await().atMost(Duration.ofSeconds(10)).until(() -> server().engine().find(name).isPresent());
  }

  /** Creates a conforming table with any comment, even a malformed one. */
  public void createQueueWithComment(String name, String comment) throws SQLException {
    exec(
        QueueConvention.createTableSql(name, List.of("`order_id` BIGINT NULL"), "sluice_queue")
            .replace("COMMENT='sluice_queue'", "COMMENT='" + comment.replace("'", "''") + "'"));
  }

  public void exec(String sql) throws SQLException {
    db.exec(sql);
  }

  /** The first column of the first row as text, or null when there is no row. */
  public String queryString(String sql, Object... args) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  public long queryLong(String sql, Object... args) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  public ManagerConfig config() {
    return configBuilder().build();
  }

  /** The test manager's settings, to add to before building. */
  public ManagerConfig.Builder configBuilder() {
    return ManagerConfig.builder()
        .managerId("test")
        .grpcHost("127.0.0.1")
        .grpcPort(0)
        .httpHost("127.0.0.1")
        .httpPort(0)
        .shard(new ShardConfig("s1", url(), db.user(), db.password(), 8))
        .discoveryInterval(Duration.ofMillis(300))
        .shutdownTimeout(Duration.ofSeconds(3));
  }

  public SluiceServer startManager() {
    return startManager(Clock.systemUTC());
  }

  public SluiceServer startManager(Clock clock) {
    return startManager(config(), clock);
  }

  public SluiceServer startManager(ManagerConfig config, Clock clock) {
    server = new SluiceServer(config, clock, registry).start();
    return server;
  }

  public SluiceServer server() {
    return server;
  }

  public void stopManager() {
    if (server != null) {
      server.stop();
    }
    if (channel != null) {
      channel.shutdownNow();
      channel = null;
    }
  }

  /** The manager's HTTP base URL, e.g. {@code http://127.0.0.1:34567}. */
  public String httpBase() {
    return "http://127.0.0.1:" + server.httpPort();
  }

  public String target() {
    return "127.0.0.1:" + server.port();
  }

  public ManagedChannel channel() {
    if (channel == null) {
      channel = NettyChannelBuilder.forTarget(target()).usePlaintext().build();
    }
    return channel;
  }

  public SluiceGrpc.SluiceBlockingStub blocking() {
    return SluiceGrpc.newBlockingStub(channel());
  }

  public RawReceiver rawReceiver(String queue, String receiverId, int maxInFlight) {
    RawReceiver r = new RawReceiver(SluiceGrpc.newStub(channel()), queue, receiverId, maxInFlight);
    closers.add(r);
    return r;
  }

  public <T extends AutoCloseable> T closeLater(T c) {
    closers.add(c);
    return c;
  }

  @Override
  public void close() {
    for (AutoCloseable c : closers) {
      try {
        c.close();
      } catch (Exception ignored) {
        // best effort
      }
    }
    stopManager();
  }
}
