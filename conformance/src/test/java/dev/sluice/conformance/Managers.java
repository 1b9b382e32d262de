package dev.sluice.conformance;

import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.manager.SluiceServer;
import dev.sluice.manager.config.ManagerConfig;
import dev.sluice.testkit.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;

/**
 * Starts real managers in this JVM, through the manager's own API ({@link SluiceServer}), on
 * loopback ports chosen by the system: each serves one shard, {@code s1}, on a test database.
 */
final class Managers {
  /** The shard every manager of the suite serves. */
  static final String SHARD = "s1";

  private Managers() {}

  /** A manager's settings over {@code db}, to change before building. */
  static ManagerConfig.Builder config(String id, TestDatabase db) {
    return ManagerConfig.builder()
        .managerId(id)
        .grpcHost("127.0.0.1")
        .grpcPort(0)
        .httpHost("127.0.0.1")
        .httpPort(0)
        .shard(new ShardConfig(SHARD, db.url(), db.user(), db.password(), 6))
        .discoveryInterval(Duration.ofMillis(300))
        .shutdownTimeout(Duration.ofSeconds(2))
        .leaseTtl(Duration.ofSeconds(3))
        .leaseRenew(Duration.ofMillis(500));
  }

  static SluiceServer start(ManagerConfig config) {
    return new SluiceServer(config, Clock.systemUTC(), new SimpleMeterRegistry()).start();
  }

  /** Whether {@code manager} leads the shard now. */
  static boolean leads(SluiceServer manager) {
    return manager.engine().shards().stream().anyMatch(ShardManager::leading);
  }

  /** Its gRPC endpoint, {@code host:port}. */
  static String target(SluiceServer manager) {
    return "127.0.0.1:" + manager.port();
  }
}
