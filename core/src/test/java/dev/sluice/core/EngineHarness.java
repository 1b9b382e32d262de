package dev.sluice.core;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.config.BinlogMode;
import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.config.TenantLimit;
import dev.sluice.core.outlet.Delivery;
import dev.sluice.core.outlet.Nack;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.DataSources;
import dev.sluice.db.KeyRange;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.store.EventRef;
import dev.sluice.db.store.JdbcLeaseStore;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * A real {@link QueueEngine} on one shard ({@value #SHARD}) of a real database, for core's tests:
 * built with test-sized timings (discovery every 200 ms, a 2 s lease renewed every 500 ms), started
 * and leading, with helpers to create a queue and wait for the engine to find it, to attach a
 * {@link CollectingOutlet}, to ack, to read a number from the database and to have another manager
 * take the shard's lease. One database per test class ({@link #fresh}); two engines share one with
 * {@link #on}. Closing stops the engine.
 */
public final class EngineHarness implements AutoCloseable {
  /** The one shard's name. */
  public static final String SHARD = "s1";

  private final TestDatabase db;
  private final QueueEngine engine;
  private final MeterRegistry registry;

  private EngineHarness(TestDatabase db, QueueEngine engine, MeterRegistry registry) {
    this.db = db;
    this.engine = engine;
    this.registry = registry;
  }

  /** An engine on a new database named after {@code testClass}. */
  public static Builder fresh(Class<?> testClass) {
    return on(TestDatabases.fresh(testClass));
  }

  /** An engine on {@code db} (for example a second manager next to a first). */
  public static Builder on(TestDatabase db) {
    return new Builder(db);
  }

  public TestDatabase db() {
    return db;
  }

  public QueueEngine engine() {
    return engine;
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** The engine's one shard. */
  public ShardManager shard() {
    return engine.shards().get(0);
  }

  /** Runs {@code createSql} and waits until the engine has found the queue {@code name}. */
  public void createQueue(String name, String createSql) throws SQLException {
    db.exec(createSql);
    awaitQueue(name);
  }

  /** Creates a conforming queue with {@code columns} and the comment {@code comment}. */
  public void queue(String name, List<String> columns, String comment) throws SQLException {
    createQueue(name, QueueConvention.createTableSql(name, columns, comment.strip()));
  }

  /** Waits until the engine has found the queue {@code name} (10 s at most). */
  public void awaitQueue(String name) {
    await().atMost(10, SECONDS).until(() -> engine.find(name).isPresent());
  }

  /** A new outlet holding up to {@code max} events, attached to {@code queue} for every key. */
  public CollectingOutlet subscribe(String queue, int max) {
    CollectingOutlet out = new CollectingOutlet(max);
    engine.subscribe(out, queue, KeyRange.ALL);
    return out;
  }

  /** Acks {@code d} as {@code out}'s. */
  public void ack(String queue, CollectingOutlet out, Delivery d) {
    engine.outcomes(queue, SHARD).acked(out, List.of(new EventRef(d.id(), d.epoch())));
  }

  /** The first column of the first row of {@code sql} (bound to {@code args}); 0 when no row. */
  public long queryLong(String sql, Object... args) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  /**
   * Another manager, {@code owner}, takes the shard's lease for {@code ttl} behind the engine's
   * back (a long pause, a partition): the lease lapses as the database's clock sees it, and {@code
   * owner} acquires it through the real lease store, which moves the fence. The engine is not told;
   * it learns it at its next renewal or from its first write the fence refuses. Tried again when
   * the engine's own renewal came in between.
   */
  public void leaseTakenBy(String owner, Duration ttl) {
    try (HikariDataSource ds = DataSources.pool(owner, db.url(), db.user(), db.password(), 1)) {
      JdbcLeaseStore leases = new JdbcLeaseStore(ds);
      await()
          .atMost(10, SECONDS)
          .until(
              () -> {
                db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = '" + SHARD + "'");
                return leases.acquire(SHARD, owner, ttl.toNanos()).held();
              });
    }
  }

  /** Nacks {@code d} as {@code out}'s, asking for a retry after {@code retryAfterNs} (0: none). */
  public void nack(String queue, CollectingOutlet out, Delivery d, long retryAfterNs) {
    engine
        .outcomes(queue, SHARD)
        .nacked(out, List.of(new Nack(new EventRef(d.id(), d.epoch()), retryAfterNs, "nacked")));
  }

  /** The first column of the first row of {@code sql} as text; null when no row. */
  public String queryString(String sql, Object... args) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  @Override
  public void close() {
    engine.stop();
  }

  /** The engine's settings; each has a test-sized default. */
  public static final class Builder {
    private final TestDatabase db;
    private String managerId = "engine-test";
    private String user;
    private String password;
    private int poolSize = 4;
    private BinlogMode binlog = BinlogMode.AUTO;
    private Duration discoveryInterval = Duration.ofMillis(200);
    private Duration leaseTtl = Duration.ofSeconds(2);
    private Duration leaseRenew = Duration.ofMillis(500);
    private MeterRegistry registry = new SimpleMeterRegistry();
    private Clock clock = Clock.systemUTC();
    private List<TenantLimit> tenantLimits = List.of();
    private boolean lead = true;

    private Builder(TestDatabase db) {
      this.db = db;
      this.user = db.user();
      this.password = db.password();
    }

    public Builder managerId(String id) {
      this.managerId = id;
      return this;
    }

    /** Connects as {@code user} instead of the database's owner. */
    public Builder credentials(String user, String password) {
      this.user = user;
      this.password = password;
      return this;
    }

    public Builder poolSize(int size) {
      this.poolSize = size;
      return this;
    }

    public Builder binlog(BinlogMode mode) {
      this.binlog = mode;
      return this;
    }

    public Builder discoveryInterval(Duration d) {
      this.discoveryInterval = d;
      return this;
    }

    public Builder leaseTtl(Duration d) {
      this.leaseTtl = d;
      return this;
    }

    public Builder leaseRenew(Duration d) {
      this.leaseRenew = d;
      return this;
    }

    public Builder registry(MeterRegistry r) {
      this.registry = r;
      return this;
    }

    /**
     * The host's wall clock the engine is given (one skewed or stepped by the test); the system's
     * by default. Elapsed time stays on the system's monotonic ticker.
     */
    public Builder clock(Clock c) {
      this.clock = c;
      return this;
    }

    /** Per-tenant overrides of the queues' comments, as a manager's configuration gives them. */
    public Builder tenantLimits(List<TenantLimit> limits) {
      this.tenantLimits = List.copyOf(limits);
      return this;
    }

    /** Started but not asked to lead (the test calls {@code engine().lead()}). */
    public Builder follower() {
      this.lead = false;
      return this;
    }

    public EngineConfig config() {
      return EngineConfig.builder()
          .managerId(managerId)
          .shards(
              List.of(
                  new ShardConfig(SHARD, db.url(), user, password, poolSize, KeyRange.ALL, binlog)))
          .discoveryInterval(discoveryInterval)
          .shutdownTimeout(Duration.ofSeconds(5))
          .leaseTtl(leaseTtl)
          .leaseRenew(leaseRenew)
          .forgetDelay(Duration.ofSeconds(1))
          .tenantLimits(tenantLimits)
          .build();
    }

    /** Builds, starts and (unless {@link #follower}) leads. */
    public EngineHarness start() {
      QueueEngine engine = new QueueEngine(config(), clock, registry);
      engine.start();
      if (lead) {
        engine.lead();
      }
      return new EngineHarness(db, engine, registry);
    }
  }
}
