package dev.sluice.manager.channel;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.sluice.client.EventProducer;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.testkit.EmbeddedAmqpBroker;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Queues bound to a RabbitMQ channel, end to end against an in-process AMQP 0-9-1 broker (Qpid
 * Broker-J, so that it can be stopped): persistent messages with their identity, acked only once
 * confirmed; an unroutable routing key is a failure with the broker's reason, not a silent drop; a
 * broker that is down makes the queue wait and loses nothing.
 */
class RabbitChannelTest {
  static EmbeddedAmqpBroker broker;
  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    broker = EmbeddedAmqpBroker.start();
    declare();
    h = new Harness(RabbitChannelTest.class);
    h.startManager(
        h.configBuilder()
            .channel(
                new ChannelConfig(
                    "r",
                    ChannelConfig.Kind.RABBITMQ,
                    null,
                    null,
                    broker.uri(),
                    Duration.ofSeconds(3),
                    100,
                    null))
            .build(),
        Clock.systemUTC());
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
    if (broker != null) {
      broker.close();
    }
  }

  static Connection connect() throws Exception {
    ConnectionFactory f = new ConnectionFactory();
    f.setUri(broker.uri());
    return f.newConnection("rabbit-channel-test");
  }

  /** An exchange "ex" with queues bound for routing keys "orders" and "outage". */
  static void declare() throws Exception {
    try (Connection c = connect();
        Channel ch = c.createChannel()) {
      ch.exchangeDeclare("ex", "direct", true);
      for (String q : List.of("orders", "outage")) {
        ch.queueDeclare(q, true, false, false, null);
        ch.queueBind(q, "ex", q);
      }
    }
  }

  static List<GetResponse> drain(String queue, int n) throws Exception {
    List<GetResponse> out = new ArrayList<>();
    try (Connection c = connect();
        Channel ch = c.createChannel()) {
      long until = System.nanoTime() + SECONDS.toNanos(20);
      while (out.size() < n && System.nanoTime() < until) {
        GetResponse r = ch.basicGet(queue, true);
        if (r == null) {
          Thread.sleep(50);
        } else {
          out.add(r);
        }
      }
    }
    return out;
  }

  static void queue(String name, String options) throws Exception {
    h.exec(
        QueueConvention.createTableSql(
            name, List.of("`order_id` BIGINT NULL"), "sluice_queue " + options));
    await().atMost(10, SECONDS).until(() -> h.server().engine().find(name).isPresent());
  }

  static long insert(String queue, long orderId) throws Exception {
    Map<String, Object> cols = new HashMap<>();
    cols.put("order_id", orderId);
    try (java.sql.Connection c = h.connect()) {
      return EventProducer.insert(c, queue, cols);
    }
  }

  static long count(String queue, int state) throws Exception {
    return h.queryLong("SELECT COUNT(*) FROM " + queue + " WHERE state = ?", state);
  }

  @Test
  void eventsArePersistentMessagesWithTheirIdentityAckedOnceConfirmed() throws Exception {
    queue("rq_orders", "channel=r channel_target=ex channel_routing_key=orders");
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      ids.add(insert("rq_orders", i));
    }
    await().atMost(20, SECONDS).until(() -> count("rq_orders", 2) == 30);
    List<GetResponse> got = drain("orders", 30);
    assertThat(got).hasSize(30);
    assertThat(
            got.stream()
                .map(
                    r ->
                        Long.parseLong(
                            r.getProps().getHeaders().get(ChannelHeaders.ID).toString())))
        .containsExactlyInAnyOrderElementsOf(ids);
    GetResponse first = got.get(0);
    assertThat(first.getProps().getDeliveryMode()).isEqualTo(2);
    assertThat(first.getProps().getMessageId()).startsWith("s1/rq_orders/").endsWith("/1");
    assertThat(new String(first.getBody(), java.nio.charset.StandardCharsets.UTF_8))
        .contains("\"order_id\"");
  }

  @Test
  void anUnroutableKeyIsAFailureThatGoesDeadWithTheBrokersReason() throws Exception {
    queue(
        "rq_lost",
        "channel=r channel_target=ex channel_routing_key=nobody max_attempts=2 min_backoff=100ms"
            + " max_backoff=100ms");
    long id = insert("rq_lost", 1);
    await().atMost(30, SECONDS).until(() -> count("rq_lost", 3) == 1);
    String reason =
        h.queryString(
            "SELECT reason FROM sluice_dead_reason WHERE queue = ? AND id = ?", "rq_lost", id);
    assertThat(reason).startsWith("max_attempts 2 reached").contains("NO_ROUTE");
  }

  @Test
  void aBrokerThatIsDownMakesTheQueueWaitAndLosesNothing() throws Exception {
    queue("rq_outage", "channel=r channel_target=ex channel_routing_key=outage max_attempts=3");
    broker.stop();
    try {
      for (int i = 0; i < 15; i++) {
        insert("rq_outage", i);
      }
      await()
          .atMost(30, SECONDS)
          .until(
              () ->
                  h.registry.get("sluice.channel.up").tag("queue", "rq_outage").gauge().value()
                      == 0);
      await()
          .during(4, SECONDS)
          .atMost(6, SECONDS)
          .until(() -> count("rq_outage", 3) == 0 && count("rq_outage", 2) == 0);
      assertThat(h.server().ready()).isTrue();
    } finally {
      broker.restart();
      declare(); // the in-memory broker comes back empty
    }
    await().atMost(60, SECONDS).until(() -> count("rq_outage", 2) == 15);
    assertThat(count("rq_outage", 3)).isZero();
    assertThat(
            drain("outage", 15).stream()
                .map(r -> r.getProps().getHeaders().get(ChannelHeaders.ID).toString())
                .distinct())
        .hasSize(15);
  }
}
