package dev.sluice.core.shard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.core.EngineHarness;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The workers of a leadership term beside its queues (recurring events, event groups, the binlog
 * follower) live exactly as long as the term: one of each while the shard is led, all gone at a
 * step-down, a new one of each for the next term, and none left after the shard's graceful stop.
 */
class TermWorkersTest {
  static final List<String> KINDS = List.of("schedules", "groups", "binlog");

  /** Live term-worker threads of shard s1 that {@code before} does not hold. */
  static Set<Thread> workers(Set<Thread> before) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .filter(t -> KINDS.stream().anyMatch(k -> t.getName().equals("sluice-s1-" + k)))
        .filter(t -> !before.contains(t))
        .collect(Collectors.toSet());
  }

  static List<String> kinds(Set<Thread> threads) {
    return threads.stream().map(Thread::getName).sorted().toList();
  }

  @Test
  void aTermsWorkersStartWithItAndAllStopAtItsEnd() throws Exception {
    TestDatabase db = TestDatabases.fresh(TermWorkersTest.class);
    // Threads of this name left by an earlier test of the same JVM are not this shard's.
    Set<Thread> earlier = workers(Set.of());
    EngineHarness harness =
        EngineHarness.on(db)
            .managerId("term-workers-test")
            .leaseTtl(Duration.ofSeconds(2))
            .leaseRenew(Duration.ofMillis(200))
            .start();
    ShardManager shard = harness.shard();
    Set<Thread> first;
    Set<Thread> second;
    try {
      await().atMost(10, SECONDS).until(shard::leading);
      await().atMost(5, SECONDS).until(() -> workers(earlier).size() == 3);
      first = workers(earlier);
      assertThat(kinds(first))
          .containsExactly("sluice-s1-binlog", "sluice-s1-groups", "sluice-s1-schedules");

      // Another manager takes the lease: the term ends, and every worker of it with it.
      db.exec(
          "UPDATE sluice_lease l JOIN sluice_fence f ON f.shard = l.shard"
              + " SET l.owner = 'thief', l.token = l.token + 1, f.owner = 'thief',"
              + " f.token = l.token, l.expires_ns = l.expires_ns + 3600000000000"
              + " WHERE l.shard = 's1'");
      await().atMost(10, SECONDS).until(() -> !shard.leading());
      await().atMost(10, SECONDS).until(() -> first.stream().noneMatch(Thread::isAlive));

      // The thief goes; the next term has workers of its own, one of each.
      db.exec("UPDATE sluice_lease SET expires_ns = 0 WHERE shard = 's1' AND owner = 'thief'");
      await().atMost(10, SECONDS).until(shard::leading);
      Set<Thread> notNew = new HashSet<>(earlier);
      notNew.addAll(first);
      await().atMost(5, SECONDS).until(() -> workers(notNew).size() == 3);
      second = workers(notNew);
      assertThat(kinds(second))
          .containsExactly("sluice-s1-binlog", "sluice-s1-groups", "sluice-s1-schedules");
    } finally {
      harness.close();
    }
    // The graceful stop waited for the writers; the binlog follower ends without being waited for.
    assertThat(second.stream().filter(t -> !t.getName().endsWith("-binlog")))
        .noneMatch(Thread::isAlive);
    await().atMost(10, SECONDS).until(() -> second.stream().noneMatch(Thread::isAlive));
  }
}
