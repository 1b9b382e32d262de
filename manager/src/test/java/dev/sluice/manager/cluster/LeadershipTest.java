package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.RawReceiver;
import dev.sluice.manager.SluiceServer;
import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.CancelStatus;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.receiver.SluiceReceiver;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** One active manager per shard, fair shares of leases, and takeover when a leader goes. */
class LeadershipTest {
  static RawReceiver raw(
      SluiceServer s, String queue, String id, int max, List<ManagedChannel> channels) {
    ManagedChannel ch =
        NettyChannelBuilder.forAddress("127.0.0.1", s.port()).usePlaintext().build();
    channels.add(ch);
    return new RawReceiver(SluiceGrpc.newStub(ch), queue, id, max);
  }

  @Test
  void onlyTheLeaderDispatchesAndAStandbyTakesOverWhenItStops() throws Exception {
    List<ManagedChannel> channels = new ArrayList<>();
    try (Cluster c = new Cluster(LeadershipTest.class, List.of("-"))) {
      c.createQueue("lead_q", "ack_wait=30s");
      SluiceServer a = c.startManager("a");
      await().atMost(10, SECONDS).until(() -> Cluster.leading(a) == 1);
      SluiceServer b = c.startManager("b");
      RawReceiver ra = raw(a, "lead_q", "ra", 500, channels);
      RawReceiver rb = raw(b, "lead_q", "rb", 500, channels);
      await().atMost(5, SECONDS).until(() -> ra.subscribed && rb.subscribed);
      c.insert(0, "lead_q", 200);
      await().atMost(10, SECONDS).until(() -> ra.all.size() == 200);
      ra.all.forEach(ra::ack);
      await()
          .atMost(10, SECONDS)
          .until(() -> c.queryLong(0, "SELECT COUNT(*) FROM lead_q WHERE state = 2") == 200);
      assertThat(rb.all).as("the standby sends nothing").isEmpty();
      assertThat(Cluster.leading(b)).isZero();

      long t0 = System.nanoTime();
      a.stop(); // graceful: gives the lease up
      await().atMost(5, SECONDS).until(() -> Cluster.leading(b) == 1);
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(4));
      c.insert(0, "lead_q", 100);
      await().atMost(10, SECONDS).until(() -> rb.all.size() == 100);
      rb.all.forEach(rb::ack);
      await()
          .atMost(10, SECONDS)
          .until(() -> c.queryLong(0, "SELECT COUNT(*) FROM lead_q WHERE state = 2") == 300);
      assertThat(c.queryLong(0, "SELECT MAX(epoch) FROM lead_q"))
          .as("no event fired twice")
          .isEqualTo(1);
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }

  @Test
  void threeShardsTwoManagersSplitTwoOneAndRebalanceForAThird() throws Exception {
    try (Cluster c = new Cluster(LeadershipTest.class, List.of("-40", "40-80", "80-"))) {
      c.createQueue("bal_q", "");
      SluiceServer a = c.startManager("a");
      SluiceServer b = c.startManager("b");
      await().atMost(15, SECONDS).until(() -> Cluster.leading(a) + Cluster.leading(b) == 3);
      await()
          .atMost(15, SECONDS)
          .until(() -> Math.max(Cluster.leading(a), Cluster.leading(b)) == 2);
      SluiceServer third = c.startManager("c");
      await()
          .atMost(15, SECONDS)
          .until(
              () ->
                  Cluster.leading(a) == 1
                      && Cluster.leading(b) == 1
                      && Cluster.leading(third) == 1);
    }
  }

  @Test
  void aGracefulStopHandsEveryShardOverAtTheNextRound() throws Exception {
    try (Cluster c = new Cluster(LeadershipTest.class, List.of("-80", "80-"))) {
      c.createQueue("bye_q", "");
      SluiceServer a = c.startManager("a");
      SluiceServer b = c.startManager("b");
      await().atMost(15, SECONDS).until(() -> Cluster.leading(a) == 1 && Cluster.leading(b) == 1);
      long t0 = System.nanoTime();
      a.stop();
      // a gave its lease up and left: b's share is both shards at once, not once a's heartbeat
      // has aged past the lease TTL (2 s).
      await().atMost(5, SECONDS).until(() -> Cluster.leading(b) == 2);
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(1200));
    }
  }

  @Test
  void readOnlyPrimaryStopsDispatchAtOnceAndResumesAfter() throws Exception {
    List<ManagedChannel> channels = new ArrayList<>();
    try (Cluster c = new Cluster(LeadershipTest.class, List.of("-"))) {
      c.createQueue("ro_q", "");
      SluiceServer a = c.startManager("a");
      await().atMost(10, SECONDS).until(() -> Cluster.leading(a) == 1);
      RawReceiver r = raw(a, "ro_q", "r", 100, channels);
      await().atMost(5, SECONDS).until(() -> r.subscribed);
      c.exec(0, "SET GLOBAL read_only = 1");
      try {
        await().atMost(5, SECONDS).until(() -> Cluster.leading(a) == 0);
        // Health says the shard is not served (no manager can serve a read-only primary).
        await().atMost(5, SECONDS).until(() -> !a.ready());
        assertThat(a.engine().faults().values()).anyMatch(f -> f.contains("read-only"));
        c.insert(0, "ro_q", 10); // root may still write; the manager must not dispatch
        await().during(Duration.ofSeconds(1)).atMost(2, SECONDS).until(() -> r.all.isEmpty());
      } finally {
        c.exec(0, "SET GLOBAL read_only = 0");
      }
      await().atMost(10, SECONDS).until(a::ready);
      await().atMost(10, SECONDS).until(() -> r.all.size() == 10);
      r.all.forEach(r::ack);
      await()
          .atMost(10, SECONDS)
          .until(() -> c.queryLong(0, "SELECT COUNT(*) FROM ro_q WHERE state = 2") == 10);
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }

  @Test
  void keyRangeSubscriptionOnlyGetsItsShards() throws Exception {
    List<ManagedChannel> channels = new ArrayList<>();
    try (Cluster c = new Cluster(LeadershipTest.class, List.of("-80", "80-"))) {
      c.createQueue("kr_q", "");
      SluiceServer a = c.startManager("a");
      await().atMost(10, SECONDS).until(() -> Cluster.leading(a) == 2);
      ManagedChannel ch =
          NettyChannelBuilder.forAddress("127.0.0.1", a.port()).usePlaintext().build();
      channels.add(ch);
      RawReceiver only80 =
          RawReceiver.withKeyRange(SluiceGrpc.newStub(ch), "kr_q", "hi", 100, "80-");
      await().atMost(5, SECONDS).until(() -> only80.subscribed);
      c.insert(0, "kr_q", 20);
      c.insert(1, "kr_q", 30);
      await().atMost(10, SECONDS).until(() -> only80.all.size() == 30);
      assertThat(only80.all).extracting(Event::getShard).containsOnly("s1");
      await()
          .during(Duration.ofMillis(500))
          .atMost(2, SECONDS)
          .until(() -> only80.all.size() == 30);
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }

  @Test
  void twoManagersTwoShardsDeliverTenThousandEventsExactlyOnce() throws Exception {
    try (Cluster c = new Cluster(LeadershipTest.class, List.of("-80", "80-"))) {
      c.createQueue("ten_q", "ack_wait=60s");
      SluiceServer a = c.startManager("a");
      SluiceServer b = c.startManager("b");
      await().atMost(15, SECONDS).until(() -> Cluster.leading(a) == 1 && Cluster.leading(b) == 1);
      Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
      List<SluiceReceiver> receivers = new ArrayList<>();
      for (SluiceServer s : List.of(a, b)) {
        for (int i = 0; i < 2; i++) {
          receivers.add(
              SluiceReceiver.builder()
                  .target("127.0.0.1:" + s.port())
                  .queue("ten_q")
                  .receiverId("r-" + s.port() + "-" + i)
                  .concurrency(4)
                  .maxInFlight(32)
                  .handler(
                      e ->
                          seen.computeIfAbsent(e.shard() + ":" + e.id(), k -> new AtomicInteger())
                              .incrementAndGet())
                  .build()
                  .start());
        }
      }
      try {
        c.insert(0, "ten_q", 5000);
        c.insert(1, "ten_q", 5000);
        await()
            .atMost(120, SECONDS)
            .until(
                () ->
                    c.queryLong(0, "SELECT COUNT(*) FROM ten_q WHERE state = 2")
                            + c.queryLong(1, "SELECT COUNT(*) FROM ten_q WHERE state = 2")
                        == 10_000);
        assertThat(seen).hasSize(10_000);
        assertThat(seen.values()).allMatch(n -> n.get() == 1);
      } finally {
        receivers.forEach(SluiceReceiver::close);
      }
    }
  }

  @Test
  void cancelNamesTheShardAndAnyManagerAppliesIt() throws Exception {
    List<ManagedChannel> channels = new ArrayList<>();
    try (Cluster c = new Cluster(LeadershipTest.class, List.of("-80", "80-"))) {
      c.createQueue("cx_q", "");
      SluiceServer a = c.startManager("a");
      SluiceServer b = c.startManager("b");
      await().atMost(15, SECONDS).until(() -> Cluster.leading(a) == 1 && Cluster.leading(b) == 1);
      String later = "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000000 AS SIGNED) + 60000000000";
      for (int shard = 0; shard < 2; shard++) {
        // The same ids (1, 2) on both shards: only the shard tells them apart.
        c.exec(
            shard, "INSERT INTO cx_q (n, time_next) VALUES (1, " + later + "), (2, " + later + ")");
      }
      ManagedChannel ch =
          NettyChannelBuilder.forAddress("127.0.0.1", a.port()).usePlaintext().build();
      channels.add(ch);
      var stub = SluiceGrpc.newBlockingStub(ch);
      assertThatThrownBy(
              () -> stub.cancel(CancelRequest.newBuilder().setQueue("cx_q").addIds(1).build()))
          .hasMessageContaining("INVALID_ARGUMENT")
          .hasMessageContaining("name the shard");
      assertThatThrownBy(
              () ->
                  stub.cancel(
                      CancelRequest.newBuilder().setQueue("cx_q").setShard("s9").addIds(1).build()))
          .hasMessageContaining("NOT_FOUND");
      // Through manager a, on both shards: one it leads, one it does not.
      for (String shard : List.of("s0", "s1")) {
        var r =
            stub.cancel(
                CancelRequest.newBuilder().setQueue("cx_q").setShard(shard).addIds(1).build());
        assertThat(r.getResults(0).getStatus()).isEqualTo(CancelStatus.CANCEL_STATUS_CANCELLED);
      }
      for (int shard = 0; shard < 2; shard++) {
        assertThat(c.queryLong(shard, "SELECT state FROM cx_q WHERE id = 1")).isEqualTo(4);
        assertThat(c.queryLong(shard, "SELECT state FROM cx_q WHERE id = 2")).isEqualTo(0);
      }
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }
}
