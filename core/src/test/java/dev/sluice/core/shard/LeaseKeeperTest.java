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
    return keeper(shard, "m1", new LeaseBalancer(1), told);
  }

  LeaseKeeper keeper(String shard, String managerId, LeaseBalancer balancer, Told told) {
    return new LeaseKeeper(
        shard,
        managerId,
        "i-" + managerId,
        new JdbcLeaseStore(ds),
        balancer,
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

  static long count(String sql) throws SQLException {
    try (java.sql.Connection c = db.connect();
        java.sql.ResultSet rs = c.createStatement().executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  long managerRows(String id) throws SQLException {
    return count("SELECT COUNT(*) FROM sluice_manager WHERE id = '" + id + "'");
  }

  /**
   * A planned hand-over: a manager that joins while another holds every lease is under its share,
   * and the holder gives one up at its next round; the newcomer then tries every 50 ms instead of
   * every renew period, for two TTLs, so the shard does not wait for its next renewal as well.
   */
  @Test
  void aKeeperUnderItsShareWhoseLeaseAnotherHoldsSeeksFastForTwoTtls() {
    LeaseKeeper holder = keeper("handed", "old", new LeaseBalancer(2), new Told());
    holder.tick();
    assertThat(holder.leader()).isTrue();
    LeaseKeeper joiner = keeper("handed", "new", new LeaseBalancer(2), told);
    joiner.tick(); // two managers live: its share is one shard, and this one is held
    assertThat(joiner.leader()).isFalse();
    assertThat(joiner.pauseNs()).isEqualTo(LeaseKeeper.SEEK_FAST_NS);
    assertThat(holder.pauseNs()).as("a leader keeps the renew period").isEqualTo(RENEW.toNanos());

    ticker.advance(TTL.multipliedBy(LeaseKeeper.SEEK_FAST_TTLS));
    joiner.tick();
    assertThat(joiner.pauseNs())
        .as("after two TTLs with no lease given up, the renew period again")
        .isEqualTo(RENEW.toNanos());

    holder.resign(); // the holder gives the lease up (a rebalance or a stop)
    joiner.tick();
    assertThat(joiner.leader()).isTrue();
    assertThat(joiner.pauseNs()).isEqualTo(RENEW.toNanos());
    assertThat(told.said).containsExactly("lead");
  }

  @Test
  void aKeeperAtItsShareDoesNotSeekFast() {
    LeaseKeeper holder = keeper("full", "other", new LeaseBalancer(1), new Told());
    holder.tick();
    LeaseBalancer mine = new LeaseBalancer(1);
    LeaseKeeper first = keeper("full-mine", "m1", mine, new Told());
    first.tick(); // m1 holds one of one: at its share
    LeaseKeeper second = keeper("full", "m1", mine, told);
    second.tick();
    assertThat(second.leader()).isFalse();
    assertThat(second.pauseNs()).isEqualTo(RENEW.toNanos());
  }

  /**
   * A graceful stop with another manager live: the heartbeat is withdrawn at once (the others count
   * one fewer and seek the shard fast) while the lease is kept and renewed until the resign; no
   * lease is sought meanwhile.
   */
  @Test
  void aLeavingKeeperWithdrawsItsHeartbeatAndKeepsItsLeaseUntilItResigns() throws SQLException {
    LeaseKeeper other = keeper("leaving-other", "peer", new LeaseBalancer(2), new Told());
    other.tick();
    LeaseKeeper k = keeper("leaving", "m1", new LeaseBalancer(2), told);
    k.tick();
    assertThat(k.leader()).isTrue();
    assertThat(managerRows("m1")).isEqualTo(1);

    assertThat(k.leave()).as("another manager is live: worth a wait").isTrue();
    k.tick();
    assertThat(managerRows("m1")).as("heartbeat withdrawn").isZero();
    for (int i = 0; i < 3 * TTL.dividedBy(RENEW); i++) {
      ticker.advance(RENEW);
      k.tick();
      assertThat(k.leader()).as("round %d: still renewed", i).isTrue();
    }
    assertThat(managerRows("m1")).as("and no heartbeat sent again").isZero();
    k.resign();
    assertThat(
            count("SELECT COUNT(*) FROM sluice_lease WHERE shard = 'leaving' AND expires_ns > 0"))
        .as("released")
        .isZero();
    assertThat(told.said).containsExactly("lead");
  }

  @Test
  void aManagerAloneDoesNotWaitForAHandOver() throws SQLException {
    db.exec("DELETE FROM sluice_manager"); // the other tests' managers are gone
    LeaseKeeper k = keeper("alone", "solo", new LeaseBalancer(1), told);
    k.tick();
    assertThat(k.leave()).isFalse();
  }
}
