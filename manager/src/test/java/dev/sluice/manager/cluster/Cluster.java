package dev.sluice.manager.cluster;

import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Several shard databases and several manager processes (in this JVM) for leadership tests. */
public final class Cluster implements AutoCloseable {
  final List<TestDatabase> shards = new ArrayList<>();
  final List<String> ranges;
  final List<SluiceServer> managers = new ArrayList<>();

  public Cluster(Class<?> test, List<String> ranges) {
    this.ranges = ranges;
    for (int i = 0; i < ranges.size(); i++) {
      shards.add(
          TestDatabases.create(
              ("c_"
                      + test.getSimpleName().toLowerCase()
                      + "_"
                      + i
                      + "_"
                      + Long.toHexString(System.nanoTime()))
                  .replaceAll("[^a-z0-9_]", "_")));
    }
  }

  public void createQueue(String name, String options) throws SQLException {
    for (int i = 0; i < shards.size(); i++) {
      exec(
          i,
          QueueConvention.createTableSql(
              name, List.of("`n` BIGINT NULL"), ("sluice_queue " + options).strip()));
    }
  }

  public void exec(int shard, String sql) throws SQLException {
    shards.get(shard).exec(sql);
  }

  public long queryLong(int shard, String sql) throws SQLException {
    try (Connection c = shards.get(shard).connect();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? rs.getLong(1) : 0;
    }
  }

  public void insert(int shard, String queue, int count) throws SQLException {
    for (int done = 0; done < count; ) {
      int n = Math.min(5000, count - done);
      StringBuilder sb = new StringBuilder("INSERT INTO " + queue + " (n) VALUES ");
      for (int i = 0; i < n; i++) {
        sb.append(i == 0 ? "" : ",").append("(").append(done + i).append(")");
      }
      exec(shard, sb.toString());
      done += n;
    }
  }

  public ManagerConfig config(String id) {
    return configBuilder(id).build();
  }

  /** A manager's settings over every shard, to change before building. */
  public ManagerConfig.Builder configBuilder(String id) {
    ManagerConfig.Builder b =
        ManagerConfig.builder()
            .managerId(id)
            .grpcHost("127.0.0.1")
            .grpcPort(0)
            .discoveryInterval(Duration.ofMillis(300))
            .shutdownTimeout(Duration.ofSeconds(2))
            .leaseTtl(Duration.ofSeconds(2))
            .leaseRenew(Duration.ofMillis(300))
            .forgetDelay(Duration.ofSeconds(3));
    for (int i = 0; i < shards.size(); i++) {
      TestDatabase d = shards.get(i);
      b.shard(
          new ShardConfig(
              "s" + i,
              d.url(),
              d.user(),
              d.password(),
              6,
              dev.sluice.db.KeyRange.parse(ranges.get(i))));
    }
    return b;
  }

  public SluiceServer startManager(String id) {
    return startManager(config(id));
  }

  public SluiceServer startManager(ManagerConfig config) {
    SluiceServer s = new SluiceServer(config, Clock.systemUTC(), new SimpleMeterRegistry()).start();
    managers.add(s);
    return s;
  }

  public static int leading(SluiceServer s) {
    return (int) s.engine().shards().stream().filter(ShardManager::leading).count();
  }

  @Override
  /**
   * Stops every manager at once: each one that sees another live serves on for its hand-over wait
   * (QueueEngine#stop) before it releases its leases, so one after another they would wait in turn.
   */
  public void close() {
    managers.parallelStream().forEach(SluiceServer::stop);
  }
}
