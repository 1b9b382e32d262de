package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.db.QueueConvention;
import dev.sluice.manager.RawReceiver;
import dev.sluice.manager.SluiceServer;
import dev.sluice.proto.v1.Event;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code key_max_in_flight} across a change of leader: a new leader counts the N events of a key
 * the old one has in flight (its receiver still holds them) and fires no (N+1)-th until one of them
 * settles.
 */
class KeyLimitFailoverTest {
  static final String KEYED = "SELECT COUNT(*) FROM kfo_q WHERE ordering_key = 'k' AND state = 1";

  @Test
  void aNewLeaderFiresNoMoreOfAKeyThanTheOldLeadersInFlightLeaveRoomFor() throws Exception {
    List<ManagedChannel> channels = new ArrayList<>();
    try (Cluster c = new Cluster(KeyLimitFailoverTest.class, List.of("-"))) {
      c.exec(
          0,
          QueueConvention.createTableSql(
              "kfo_q",
              List.of(
                  "`ordering_key` VARCHAR(64) NULL",
                  "KEY `sluice_ordering` (`ordering_key`, `state`, `id`)"),
              "sluice_queue key_max_in_flight=2 ack_wait=1m"));
      // The old leader waits up to 20 s for its receiver while it stops: its two stay fired.
      SluiceServer a =
          c.startManager(
              c.configBuilder("a")
                  .shutdownTimeout(Duration.ofSeconds(20))
                  .leaseTtl(Duration.ofSeconds(20))
                  .build());
      await().atMost(10, SECONDS).until(() -> Cluster.leading(a) == 1);
      SluiceServer b =
          c.startManager(c.configBuilder("b").leaseTtl(Duration.ofSeconds(20)).build());
      RawReceiver ra = LeadershipTest.raw(a, "kfo_q", "ra", 10, channels);
      RawReceiver rb = LeadershipTest.raw(b, "kfo_q", "rb", 10, channels);
      await().atMost(5, SECONDS).until(() -> ra.subscribed && rb.subscribed);
      c.exec(0, "INSERT INTO kfo_q (ordering_key) VALUES ('k'),('k'),('k'),('k'),('k')");

      Event held1 = ra.events.poll(10, SECONDS);
      Event held2 = ra.events.poll(10, SECONDS);
      assertThat(held1).as("first of k").isNotNull();
      assertThat(held2).as("second of k").isNotNull();
      assertThat(ra.events.poll(1500, MILLISECONDS)).as("a third of k from a").isNull();

      Thread stopper = new Thread(a::stop, "test-stop-a");
      stopper.start();
      await().atMost(10, SECONDS).until(() -> Cluster.leading(b) == 1);
      assertThat(rb.events.poll(3, SECONDS)).as("a third of k from the new leader").isNull();
      assertThat(c.queryLong(0, KEYED)).isEqualTo(2);
      assertThat(stopper.isAlive()).as("the old leader still waits for its receiver").isTrue();

      ra.ack(held1); // settles through the CAS; the new leader's next census sees room for one
      Event third = rb.events.poll(10, SECONDS);
      assertThat(third).as("one settled: one more goes").isNotNull();
      assertThat(rb.events.poll(2500, MILLISECONDS)).as("but only one").isNull();
      assertThat(c.queryLong(0, KEYED)).isEqualTo(2);

      ra.ack(held2);
      rb.ack(third);
      stopper.join(25_000);
      List<Event> rest = new ArrayList<>();
      Event e;
      while (rest.size() < 2 && (e = rb.events.poll(10, SECONDS)) != null) {
        rest.add(e);
        rb.ack(e);
      }
      assertThat(rest).as("the last two").hasSize(2);
      await()
          .atMost(10, SECONDS)
          .until(() -> c.queryLong(0, "SELECT COUNT(*) FROM kfo_q WHERE state = 2") == 5);
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }
}
