package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.SluiceServer;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.testkit.FreePorts;
import dev.sluice.testkit.TestDatabase;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Two managers on one shard; the leader, a real {@code sluice serve} process, is killed with
 * SIGKILL mid-flight. The standby (in this JVM) takes the lease within the lease TTL plus one renew
 * period, and a receiver connected to both gets every event.
 */
class LeaderKillTest {
  static final int EVENTS = 400;

  /** Scheduling slack on a loaded 2-core machine: the keeper's round itself, thread wake-ups. */
  static final Duration SLACK = Duration.ofMillis(300);

  @Test
  void standbyTakesOverWithinTheLeaseTtlAndEveryEventIsDelivered() throws Exception {
    try (Cluster c = new Cluster(LeaderKillTest.class, List.of("-"))) {
      c.createQueue("kill_q", "ack_wait=2s min_backoff=100ms max_backoff=200ms");
      Duration ttl = c.config("x").leaseTtl();
      Duration renew = c.config("x").leaseRenew();
      int port = FreePorts.belowEphemeralRange();
      TestDatabase d = c.shards.get(0);
      Path cfg = Files.createTempFile("sluice-leader-kill", ".yaml");
      Files.writeString(
          cfg,
          "manager_id: doomed\nhttp_port: 0\ngrpc_host: 127.0.0.1\ngrpc_port: "
              + port
              + "\ndiscovery_interval: 300ms\nlease_ttl: "
              + ttl.toMillis()
              + "ms\nlease_renew: "
              + renew.toMillis()
              + "ms\nshards:\n  - name: s0\n    url: \""
              + d.url()
              + "\"\n"
              + (d.user() == null ? "" : "    user: " + d.user() + "\n    password: \"\"\n"));
      Process doomed =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  "dev.sluice.manager.cli.SluiceCli",
                  "serve",
                  "--config",
                  cfg.toString())
              .redirectErrorStream(true)
              .redirectOutput(new File("target/leader-kill-doomed.log"))
              .start();
      SluiceReceiver receiver = null;
      try {
        await()
            .atMost(60, SECONDS)
            .ignoreExceptions()
            .until(
                () ->
                    c.queryLong(
                            0,
                            "SELECT COUNT(*) FROM sluice_lease WHERE owner = 'doomed' AND"
                                + " expires_ns > CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS"
                                + " SIGNED)")
                        == 1);
        SluiceServer standby = c.startManager("standby");
        Map<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
        receiver =
            SluiceReceiver.builder()
                .targets(List.of("127.0.0.1:" + port, "127.0.0.1:" + standby.port()))
                .queue("kill_q")
                .receiverId("both")
                .concurrency(4)
                .maxInFlight(32)
                .reconnectBackoff(Duration.ofMillis(100), Duration.ofSeconds(1))
                .handler(
                    e -> {
                      seen.computeIfAbsent(e.getLong("n"), k -> new AtomicInteger())
                          .incrementAndGet();
                      Thread.sleep(5); // the handler's work time (a load shape), not a wait
                    })
                .build()
                .start();
        c.insert(0, "kill_q", EVENTS);
        await().atMost(30, SECONDS).until(() -> seen.size() >= EVENTS / 4);
        assertThat(Cluster.leading(standby)).as("the standby waits").isZero();

        doomed.destroyForcibly(); // SIGKILL: the lease is not given up
        long killedAt = System.nanoTime();
        assertThat(doomed.waitFor(10, TimeUnit.SECONDS)).isTrue();
        await()
            .atMost(10, SECONDS)
            .pollInterval(Duration.ofMillis(10))
            .until(() -> Cluster.leading(standby) == 1);
        Duration takeover = Duration.ofNanos(System.nanoTime() - killedAt);
        System.err.printf(
            "LeaderKillTest: standby led %d ms after the kill%n", takeover.toMillis());
        assertThat(takeover)
            .as("takeover after the kill (ttl %s, renew %s)", ttl, renew)
            .isLessThanOrEqualTo(ttl.plus(renew).plus(SLACK));

        await()
            .atMost(60, SECONDS)
            .until(() -> c.queryLong(0, "SELECT COUNT(*) FROM kill_q WHERE state = 2") == EVENTS);
        assertThat(seen).as("every event was delivered").hasSize(EVENTS);
        assertThat(c.queryLong(0, "SELECT token FROM sluice_lease")).isEqualTo(2);
      } finally {
        doomed.destroyForcibly();
        if (receiver != null) {
          receiver.close();
        }
      }
    }
  }
}
