package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.RawReceiver;
import dev.sluice.manager.SluiceServer;
import dev.sluice.proto.v1.Event;
import dev.sluice.receiver.SluiceReceiver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Receivers are tracked by id across streams: graceful shutdown and the forget delay. */
class ReceiverLifecycleTest {
  static Cluster c;
  static SluiceServer m;

  @BeforeAll
  static void start() throws Exception {
    c = new Cluster(ReceiverLifecycleTest.class, List.of("-"));
    c.createQueue("drain_q", "ack_wait=60s");
    c.createQueue("forget_q", "max_receivers_per_tenant=1");
    m = c.startManager("m");
    await().atMost(10, SECONDS).until(() -> Cluster.leading(m) == 1);
  }

  @AfterAll
  static void stop() {
    c.close();
  }

  @Test
  void notifyShutdownDrainsInFlightWorkWithoutRedelivery() throws Exception {
    CountDownLatch started = new CountDownLatch(4);
    CountDownLatch release = new CountDownLatch(1);
    Map<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
    SluiceReceiver r =
        SluiceReceiver.builder()
            .target("127.0.0.1:" + m.port())
            .queue("drain_q")
            .receiverId("leaving")
            .concurrency(4)
            .handler(
                e -> {
                  seen.computeIfAbsent(e.id(), k -> new AtomicInteger()).incrementAndGet();
                  started.countDown();
                  release.await();
                })
            .build()
            .start();
    c.insert(0, "drain_q", 20);
    assertThat(started.await(10, SECONDS)).isTrue();
    Thread closer = new Thread(r::close);
    closer.start();
    // Once NotifyShutdown arrived, nothing new is sent; the four held events finish and ack.
    await().atMost(5, SECONDS).until(() -> m.engine().served().get(0).live().inFlight() == 4);
    release.countDown();
    closer.join(15_000);
    assertThat(seen).hasSize(4);
    await()
        .atMost(10, SECONDS)
        .until(() -> c.queryLong(0, "SELECT COUNT(*) FROM drain_q WHERE state = 2") == 4);
    assertThat(c.queryLong(0, "SELECT COUNT(*) FROM drain_q WHERE epoch > 1"))
        .as("no redelivery")
        .isZero();
    assertThat(c.queryLong(0, "SELECT COUNT(*) FROM drain_q WHERE state = 0")).isEqualTo(16);
  }

  @Test
  void aShortReconnectWithinForgetDelayKeepsTheReceiversTenants() throws Exception {
    // forget_delay is 3s in the Cluster config; each tenant is served by exactly one receiver.
    var ch = new java.util.ArrayList<io.grpc.ManagedChannel>();
    try {
      RawReceiver r1 = LeadershipTest.raw(m, "forget_q", "r1", 1000, ch);
      RawReceiver r2 = LeadershipTest.raw(m, "forget_q", "r2", 1000, ch);
      await().atMost(5, SECONDS).until(() -> r1.subscribed && r2.subscribed);
      List<String> tenants =
          java.util.stream.IntStream.range(0, 14).mapToObj(i -> "t" + i).toList();
      for (String t : tenants) {
        c.exec(0, "INSERT INTO forget_q (tenant, n) VALUES ('" + t + "', 1)");
      }
      await().atMost(10, SECONDS).until(() -> r1.all.size() + r2.all.size() == 14);
      r1.all.forEach(r1::ack);
      r2.all.forEach(r2::ack);
      var r1Tenants = r1.all.stream().map(Event::getTenant).collect(Collectors.toSet());
      assertThat(r1Tenants).isNotEmpty();
      r1.breakStream();
      RawReceiver back = LeadershipTest.raw(m, "forget_q", "r1", 1000, ch);
      await().atMost(5, SECONDS).until(() -> back.subscribed);
      for (String t : r1Tenants) {
        c.exec(0, "INSERT INTO forget_q (tenant, n) VALUES ('" + t + "', 2)");
      }
      await().atMost(10, SECONDS).until(() -> back.all.size() == r1Tenants.size());
      assertThat(back.all.stream().map(Event::getTenant).collect(Collectors.toSet()))
          .isEqualTo(r1Tenants);
      await()
          .during(Duration.ofMillis(300))
          .atMost(2, SECONDS)
          .until(() -> r2.all.size() == 14 - r1Tenants.size());
    } finally {
      ch.forEach(io.grpc.ManagedChannel::shutdownNow);
    }
  }
}
