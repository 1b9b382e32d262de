package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.testkit.FreePorts;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A manager killed with SIGKILL mid-flight loses nothing: its fired rows come back through the
 * retry collector of the next manager, and everything is delivered and acked.
 */
class ManagerCrashTest {
  static final int EVENTS = 300;

  @Test
  void killedManagerLosesNothing() throws Exception {
    try (Harness h = new Harness(ManagerCrashTest.class)) {
      h.createQueue("crash_q", "ack_wait=2s min_backoff=50ms max_backoff=100ms");
      StringBuilder sb = new StringBuilder("INSERT INTO crash_q (order_id) VALUES ");
      for (int i = 0; i < EVENTS; i++) {
        sb.append(i == 0 ? "" : ",").append("(").append(i).append(")");
      }
      h.exec(sb.toString());

      int port = FreePorts.belowEphemeralRange();
      Path cfg = Files.createTempFile("sluice-crash", ".yaml");
      Files.writeString(
          cfg,
          "manager_id: doomed\nhttp_port: 0\ngrpc_host: 127.0.0.1\ngrpc_port: "
              + port
              + "\ndiscovery_interval: 1s\nshards:\n  - name: s1\n    url: \""
              + h.url()
              + "\"\n    user: "
              + h.db.user()
              + "\n    password: \"\"\n");
      Process manager =
          new ProcessBuilder(
                  ProcessHandle.current().info().command().orElse("java"),
                  "-cp",
                  System.getProperty("java.class.path"),
                  "dev.sluice.manager.cli.SluiceCli",
                  "serve",
                  "--config",
                  cfg.toString())
              .redirectErrorStream(true)
              .redirectOutput(new File("target/crash-manager.log"))
              .start();
      Map<Long, Integer> firstEpoch = new HashMap<>();
      ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
      try {
        var health = io.grpc.health.v1.HealthGrpc.newBlockingStub(ch);
        await()
            .atMost(60, SECONDS)
            .ignoreExceptions()
            .until(
                () ->
                    health
                            .check(io.grpc.health.v1.HealthCheckRequest.getDefaultInstance())
                            .getStatus()
                        == io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
        RawReceiver probe = new RawReceiver(SluiceGrpc.newStub(ch), "crash_q", "victim", 50);
        // Take 50 events and ack 20 of them.
        for (int i = 0; i < 50; i++) {
          Event e = probe.events.poll(30, TimeUnit.SECONDS);
          assertThat(e).isNotNull();
          firstEpoch.put(e.getId(), (int) e.getEpoch());
          if (i < 20) {
            probe.ack(e);
          }
        }
        await().atMost(10, SECONDS).until(() -> probe.results.size() == 20);
        assertThat(probe.results)
            .allMatch(x -> x.getStatus() == dev.sluice.proto.v1.AckStatus.ACK_STATUS_OK);
        // The 20 freed credits are refilled: 50 events are in flight when the manager dies.
        await().atMost(10, SECONDS).until(() -> probe.all.size() == 70);
        manager.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      } finally {
        manager.destroyForcibly();
        ch.shutdownNow();
      }
      assertThat(h.queryLong("SELECT COUNT(*) FROM crash_q WHERE state = 1")).isEqualTo(50);

      h.startManager();
      RawReceiver r = h.rawReceiver("crash_q", "survivor", 100);
      Map<Long, Long> delivered = new HashMap<>();
      await()
          .atMost(60, SECONDS)
          .until(
              () -> {
                Event e;
                while ((e = r.events.poll()) != null) {
                  delivered.put(e.getId(), e.getEpoch());
                  r.ack(e);
                }
                return h.queryLong("SELECT COUNT(*) FROM crash_q WHERE state = 2") == EVENTS;
              });
      assertThat(delivered).hasSize(EVENTS - 20);
      long redelivered = delivered.entrySet().stream().filter(en -> en.getValue() == 2).count();
      assertThat(redelivered)
          .as("the 50 held by the dead manager came back as attempt 2")
          .isEqualTo(50);
    }
  }
}
