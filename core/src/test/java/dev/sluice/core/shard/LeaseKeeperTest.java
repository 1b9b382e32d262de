package dev.sluice.core.shard;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.core.loop.FakeTicker;
import dev.sluice.core.loop.LoopFaults;
import dev.sluice.db.DataSources;
import dev.sluice.db.SluiceMigrations;
import dev.sluice.db.store.JdbcLeaseStore;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lease keeper's rounds driven on the test's thread against a real lease table, on a ticker the
 * test moves: a held lease is renewed every period and kept past its TTL; when renewal fails, the
 * leader stops one renew period before the lease could expire — not earlier, not later — and every
 * failed round is counted.
 */
class LeaseKeeperTest {
  static final Duration TTL = Duration.ofSeconds(10);
  static final Duration RENEW = Duration.ofSeconds(2);

  static TestDatabase db;
  static HikariDataSource ds;

  @BeforeAll
  static void start() {
    db = TestDatabases.fresh(LeaseKeeperTest.class);
    ds = DataSources.pool("lease-test", db.url(), db.user(), db.password(), 4);
    SluiceMigrations.migrateSluice(ds);
  }

  @AfterAll
  static void stop() {
    ds.close();
  }

  /** What the keeper told its shard, in order. */
  static final class Told implements LeaseKeeper.Leadership {
    final List<String> said = new ArrayList<>();

    @Override
    public void lead(long token) {
      said.add("lead");
    }

    @Override
    public void stopLeading(String why) {
      said.add("stop: " + why);
    }
  }

  final FakeTicker ticker = new FakeTicker();
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final Told told = new Told();

  LeaseKeeper keeper(String shard) {
    return new LeaseKeeper(
        shard,
        "m1",
        "i1",
        new JdbcLeaseStore(ds),
        new LeaseBalancer(1),
        told,
        TTL.toNanos(),
        RENEW.toNanos(),
        ticker,
        LoopFaults.ofShard(registry, shard, ticker));
  }

  double leaseErrors(String shard) {
    Counter c = registry.find("sluice.loop.errors").tags("shard", shard, "loop", "lease").counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void aHeldLeaseIsRenewedEveryPeriodAndKeptPastItsTtl() {
    LeaseKeeper k = keeper("renewed");
    k.tick();
    assertThat(k.leader()).isTrue();
    for (int i = 0; i < 3 * TTL.dividedBy(RENEW); i++) { // three TTLs on the keeper's clock
      ticker.advance(RENEW);
      k.tick();
      assertThat(k.leader()).as("round %d", i).isTrue();
    }
    assertThat(told.said).containsExactly("lead");
    assertThat(leaseErrors("renewed")).isZero();
  }

  @Test
  void aLeaderThatCannotRenewStopsOneRenewPeriodBeforeTheTtl() throws SQLException {
    LeaseKeeper k = keeper("unrenewed");
    k.tick();
    assertThat(k.leader()).isTrue();
    db.exec("RENAME TABLE sluice_lease TO sluice_lease_away"); // every renewal now fails
    try {
      for (int i = 1; i <= 3; i++) {
        ticker.advance(RENEW);
        k.tick();
        assertThat(k.leader()).as("%d failed renewals: the lease still runs", i).isTrue();
      }
      ticker.advance(Duration.ofMillis(1_900)); // 7.9 s since the last renewal: ttl - renew is 8 s
      k.tick();
      assertThat(k.leader()).isTrue();
      assertThat(leaseErrors("unrenewed")).as("each failed round counted").isEqualTo(4);

      ticker.advance(Duration.ofMillis(200)); // 8.1 s
      k.tick();
      assertThat(k.leader()).isFalse();
      assertThat(told.said).containsExactly("lead", "stop: could not renew the lease in time");
      assertThat(leaseErrors("unrenewed")).isEqualTo(5);
    } finally {
      db.exec("RENAME TABLE sluice_lease_away TO sluice_lease");
    }
  }
}
