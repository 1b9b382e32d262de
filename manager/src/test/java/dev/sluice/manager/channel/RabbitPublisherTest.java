package dev.sluice.manager.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.sluice.manager.FreezableProxy;
import dev.sluice.testkit.AmqpBrokers;
import dev.sluice.testkit.EmbeddedAmqpBroker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link RabbitPublisher} against real brokers: the embedded AMQP broker (Qpid Broker-J, with a
 * small message size limit) always, and the RabbitMQ on 127.0.0.1:5672 too when one answers. Tests
 * that freeze or stop a broker use an embedded one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RabbitPublisherTest {
  /** The embedded broker's limit: a larger message closes the publisher's channel. */
  private static final int MAX_MESSAGE_SIZE = 64 * 1024;

  private static EmbeddedAmqpBroker embedded;

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeAll
  static void startBroker() {
    embedded = EmbeddedAmqpBroker.builder().maxMessageSize(MAX_MESSAGE_SIZE).start();
  }

  @AfterAll
  static void stopBroker() {
    if (embedded != null) {
      embedded.close();
    }
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  /** A broker for the parameterized tests: its name and URI. */
  record Broker(String name, String uri, boolean isEmbedded) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> brokers() {
    List<Arguments> list = new ArrayList<>();
    list.add(Arguments.of(new Broker("embedded Qpid", embedded.uri(), true)));
    AmqpBrokers.local()
        .ifPresent(uri -> list.add(Arguments.of(new Broker("local RabbitMQ", uri, false))));
    return list.stream();
  }

  // ------------------------------------------------------------------ refusals

  @ParameterizedTest(name = "{0}")
  @MethodSource("brokers")
  void anUnroutableMessageFailsAloneAndTheNextRoutableOneIsConfirmed(Broker broker)
      throws Exception {
    Topology t = declare(broker.uri());
    RabbitPublisher publisher = publisher(broker.uri(), Duration.ofSeconds(10));

    CompletableFuture<Void> before = publisher.publish(message(t.exchange, t.routingKey, 1));
    CompletableFuture<Void> nowhere = publisher.publish(message(t.exchange, "nowhere", 2));
    CompletableFuture<Void> noQueue = publisher.publish(message("", "sluice-no-such-queue", 3));
    CompletableFuture<Void> after = publisher.publish(message(t.exchange, t.routingKey, 4));

    PublishFailure f = failure(nowhere);
    assertThat(f.brokerDown()).isFalse();
    assertThat(f.getMessage())
        .contains("could not route")
        .contains("exchange '" + t.exchange + "' with routing key 'nowhere'")
        .contains("NO_ROUTE");
    PublishFailure g = failure(noQueue);
    assertThat(g.brokerDown()).isFalse();
    assertThat(g.getMessage()).contains("routing key 'sluice-no-such-queue'").contains("NO_ROUTE");
    confirmed(before);
    confirmed(after);
    assertThat(t.drain()).extracting(m -> m.id).containsExactly("0/orders/1/1", "0/orders/4/1");
    assertThat(publisher.connected()).isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("brokers")
  void aMissingExchangeFailsThatMessageWithTheBrokersReasonAndThePublisherGoesOn(Broker broker)
      throws Exception {
    Topology t = declare(broker.uri());
    RabbitPublisher publisher = publisher(broker.uri(), Duration.ofSeconds(10));
    String missing = "sluice-missing-" + Integer.toHexString(ThreadLocalRandom.current().nextInt());

    // Sent back to back: the broker closes the channel on the second, the others were on it too.
    List<CompletableFuture<Void>> good = new ArrayList<>();
    good.add(publisher.publish(message(t.exchange, t.routingKey, 1)));
    CompletableFuture<Void> bad = publisher.publish(message(missing, t.routingKey, 2));
    for (int i = 3; i <= 6; i++) {
      good.add(publisher.publish(message(t.exchange, t.routingKey, i)));
    }

    PublishFailure f = failure(bad);
    assertThat(f.brokerDown()).isFalse();
    assertThat(f.getMessage()).contains("404").contains("NOT_FOUND").contains(missing);
    for (CompletableFuture<Void> ok : good) {
      confirmed(ok);
    }
    confirmed(publisher.publish(message(t.exchange, t.routingKey, 7)));
    assertThat(t.drain())
        .extracting(m -> m.id)
        .contains("0/orders/1/1", "0/orders/3/1", "0/orders/6/1", "0/orders/7/1")
        .doesNotContain("0/orders/2/1");
    assertThat(publisher.connected()).isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("brokers")
  void aMessageOverTheBrokersSizeLimitFailsAndThePublisherGoesOn(Broker broker) throws Exception {
    Assumptions.assumeTrue(
        broker.isEmbedded(), "RabbitMQ's max_message_size is set in its own configuration");
    Topology t = declare(broker.uri());
    RabbitPublisher publisher = publisher(broker.uri(), Duration.ofSeconds(10));

    CompletableFuture<Void> small = publisher.publish(message(t.exchange, t.routingKey, 1));
    CompletableFuture<Void> large =
        publisher.publish(
            message(t.exchange, t.routingKey, 2, new byte[MAX_MESSAGE_SIZE + 1], Map.of()));
    CompletableFuture<Void> next = publisher.publish(message(t.exchange, t.routingKey, 3));

    PublishFailure f = failure(large);
    assertThat(f.brokerDown()).isFalse();
    assertThat(f.getMessage())
        .contains("0/orders/2/1")
        .contains("311")
        .contains("greater than allowed maximum");
    confirmed(small);
    confirmed(next);
    // The first may arrive twice: its confirm can be lost with the channel, and it is sent again.
    assertThat(t.drain())
        .extracting(m -> m.id)
        .contains("0/orders/1/1", "0/orders/3/1")
        .doesNotContain("0/orders/2/1");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("brokers")
  void aFullQueueThatRejectsPublishesRefusesThatMessageNotTheBroker(Broker broker)
      throws Exception {
    // One message at most, further ones refused: RabbitMQ nacks them, Qpid returns them.
    Map<String, Object> oneAtMost =
        broker.isEmbedded()
            ? Map.of("qpid.max_count", 1, "qpid.policy_type", "REJECT")
            : Map.of("x-max-length", 1, "x-overflow", "reject-publish");
    Topology t = new Topology(broker.uri(), oneAtMost);
    RabbitPublisher publisher = publisher(broker.uri(), Duration.ofSeconds(10));

    confirmed(publisher.publish(message(t.exchange, t.routingKey, 1)));
    PublishFailure f = failure(publisher.publish(message(t.exchange, t.routingKey, 2)));
    // The fault of one destination: it counts against the event, the channel is not down.
    assertThat(f.brokerDown()).isFalse();
    assertThat(f.getMessage()).contains("0/orders/2/1").containsAnyOf("nack", "RESOURCE_ERROR");
    assertThat(publisher.connected()).isTrue();
    assertThat(t.drain()).extracting(m -> m.id).containsExactly("0/orders/1/1");
    confirmed(publisher.publish(message(t.exchange, t.routingKey, 3)));
    assertThat(publisher.connected()).isTrue();
  }

  // ------------------------------------------------------------------ broker down or silent

  @Test
  void aBrokerThatNeverAnsweredFailsEachMessageWithinTheTimeoutAsBrokerDown() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    } // nothing listens there now
    String uri = "amqp://guest:guest@127.0.0.1:" + port;
    RabbitPublisher publisher = publisher(uri, Duration.ofMillis(500));

    long t0 = System.nanoTime();
    PublishFailure f = failure(publisher.publish(message("x", "r", 1)));
    assertThat(f.brokerDown()).isTrue();
    assertThat(f.getMessage()).contains("not confirmed within 500 ms").contains("cannot connect");
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
    assertThat(publisher.connected()).isFalse();
  }

  @Test
  void aSilentBrokerFailsTheUnconfirmedWithinTheTimeoutAndThePublisherRecoversWhenItSpeaks()
      throws Exception {
    Topology t = declare(embedded.uri());
    FreezableProxy proxy = closeLater(new FreezableProxy(embedded.port()));
    String viaProxy = "amqp://guest:guest@127.0.0.1:" + proxy.port();
    RabbitPublisher publisher = publisher(viaProxy, Duration.ofSeconds(1));
    confirmed(publisher.publish(message(t.exchange, t.routingKey, 1)));
    assertThat(publisher.connected()).isTrue();

    proxy.freeze();
    List<CompletableFuture<Void>> silent = new ArrayList<>();
    for (int i = 2; i <= 6; i++) {
      silent.add(publisher.publish(message(t.exchange, t.routingKey, i)));
    }
    for (CompletableFuture<Void> f : silent) {
      PublishFailure failure = failure(f);
      assertThat(failure.brokerDown()).isTrue();
      // Its own timeout, or the connection cut by an earlier one's: when the test thread was slow
      // between two publishes, one sweep of the timeout thread sees only the first ones due.
      assertThat(failure.getMessage())
          .containsAnyOf(
              "not confirmed within 1 s",
              "no confirm within 1 s; the publisher closed the connection");
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> !publisher.connected());

    proxy.unfreeze();
    await().atMost(Duration.ofSeconds(20)).until(publisher::connected);
    confirmed(publisher.publish(message(t.exchange, t.routingKey, 7)));
    assertThat(t.drain()).extracting(m -> m.id).contains("0/orders/1/1", "0/orders/7/1");
  }

  @Test
  void theTimeoutAndTheReconnectBackoffRunOnThePublishersTicker() throws Exception {
    Topology t = declare(embedded.uri());
    FreezableProxy proxy = closeLater(new FreezableProxy(embedded.port()));
    AtomicLong now = new AtomicLong(123_000_000_000L);
    RabbitPublisher publisher =
        closeLater(
            new RabbitPublisher(
                new RabbitChannelSettings(
                    "amqp://guest:guest@127.0.0.1:" + proxy.port(),
                    Duration.ofSeconds(30),
                    "sluice-test-ticker"),
                now::get));
    confirmed(publisher.publish(message(t.exchange, t.routingKey, 1)));

    proxy.freeze();
    CompletableFuture<Void> silent = publisher.publish(message(t.exchange, t.routingKey, 2));
    now.addAndGet(Duration.ofSeconds(29).toNanos());
    // The timeout thread sweeps once the ticker moved: 29 s on the ticker are not its 30 s.
    await()
        .during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(3))
        .until(() -> !silent.isDone() && publisher.connected());
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    PublishFailure f = failure(silent);
    assertThat(f.brokerDown()).isTrue();
    assertThat(f.getMessage()).contains("not confirmed within 30 s");
    await().atMost(Duration.ofSeconds(5)).until(() -> !publisher.connected());

    // The connection was cut; the first reconnect waits its backoff (100 ms) on the ticker too.
    proxy.unfreeze();
    await()
        .during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(3))
        .until(() -> !publisher.connected());
    now.addAndGet(RabbitReconnects.RECONNECT.maxNs());
    await().atMost(Duration.ofSeconds(10)).until(publisher::connected);
    confirmed(publisher.publish(message(t.exchange, t.routingKey, 3)));
    assertThat(t.drain()).extracting(m -> m.id).contains("0/orders/1/1", "0/orders/3/1");
  }

  @Test
  void aTurnOfThePublisherThreadThatThrowsIsCountedAndItReconnectsAfterTheBackoff()
      throws Exception {
    Topology t = declare(embedded.uri());
    FakeTicker ticker = new FakeTicker();
    RabbitPublisher publisher =
        closeLater(
            new RabbitPublisher(
                new RabbitChannelSettings(
                    embedded.uri(), Duration.ofSeconds(30), "sluice-test-turn-fails"),
                ticker));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    publisher.registerMetrics(registry, "rq");
    confirmed(publisher.publish(message(t.exchange, t.routingKey, 1)));

    // Headers that cannot be read: copying them throws on the publisher thread, which nothing
    // there expects.
    Map<String, String> unreadable =
        new AbstractMap<>() {
          @Override
          public Set<Entry<String, String>> entrySet() {
            throw new IllegalStateException("headers that cannot be read");
          }
        };
    CompletableFuture<Void> broken =
        publisher.publish(
            new OutboundMessage(
                t.exchange, t.routingKey, null, unreadable, new byte[1], "0/q/2/1"));
    await().atMost(Duration.ofSeconds(10)).until(() -> !publisher.connected());
    assertThat(
            registry
                .get("sluice.channel.loop.errors")
                .tags("channel", "rq", "loop", "publisher")
                .functionCounter()
                .count())
        .isEqualTo(1);

    // The thread lives on; the next connection waits the backoff, on the ticker.
    CompletableFuture<Void> next = publisher.publish(message(t.exchange, t.routingKey, 3));
    await()
        .during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(3))
        .until(() -> !publisher.connected() && !next.isDone());
    ticker.advanceNanos(RabbitReconnects.RECONNECT.maxNs());
    confirmed(next);
    assertThat(publisher.connected()).isTrue();
    assertThat(broken).isNotDone();
    ticker.advance(Duration.ofSeconds(30));
    PublishFailure f = failure(broken);
    assertThat(f.brokerDown()).isTrue();
    assertThat(f.getMessage()).contains("0/q/2/1").contains("not confirmed within 30 s");
    assertThat(
            registry
                .get("sluice.channel.connect.failures")
                .tags("channel", "rq")
                .functionCounter()
                .count())
        .isZero();
    assertThat(t.drain()).extracting(m -> m.id).containsExactly("0/orders/1/1", "0/orders/3/1");
  }

  @Test
  void aBrokerStoppedMidRunFailsWhatItDidNotConfirmAndPublishingResumesAfterItsRestart()
      throws Exception {
    EmbeddedAmqpBroker own = closeLater(EmbeddedAmqpBroker.start());
    Duration timeout = Duration.ofSeconds(2);
    RabbitPublisher publisher = publisher(own.uri(), timeout);
    Topology t = declare(own.uri());

    List<CompletableFuture<Void>> futures = new CopyOnWriteArrayList<>();
    AtomicBoolean producing = new AtomicBoolean(true);
    Thread producer =
        new Thread(
            () -> {
              for (int i = 0; producing.get(); i++) {
                futures.add(publisher.publish(message(t.exchange, t.routingKey, i)));
                try {
                  Thread.sleep(2); // paces the producer (a load shape), not a wait
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "test-producer");
    producer.start();
    // Some are confirmed before the broker goes.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                futures.stream().filter(f -> f.isDone() && !f.isCompletedExceptionally()).count()
                    >= 5);
    own.stop();
    await().atMost(Duration.ofSeconds(5)).until(() -> !publisher.connected());
    // Messages published meanwhile fail (time out): the first one after the disconnect has.
    int afterStop = futures.size();
    await()
        .atMost(timeout.plusSeconds(5))
        .until(
            () -> futures.size() > afterStop && futures.get(afterStop).isCompletedExceptionally());
    producing.set(false);
    producer.join();

    int confirmed = 0;
    int failed = 0;
    for (CompletableFuture<Void> f : futures) {
      try {
        f.get(timeout.toMillis() + 3000, TimeUnit.MILLISECONDS);
        confirmed++;
      } catch (ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(PublishFailure.class);
        assertThat(((PublishFailure) e.getCause()).brokerDown())
            .as(e.getCause().getMessage())
            .isTrue();
        failed++;
      }
    }
    assertThat(confirmed).isPositive();
    assertThat(failed).isPositive();

    own.restart(); // empty again: the topology is declared anew
    await().atMost(Duration.ofSeconds(15)).until(publisher::connected);
    Topology again = declare(own.uri());
    confirmed(publisher.publish(message(again.exchange, again.routingKey, 100_000)));
    assertThat(again.drain()).extracting(m -> m.id).contains("0/orders/100000/1");
  }

  @Test
  void closeFailsWhatIsUnconfirmedAsBrokerDown() throws Exception {
    Topology t = declare(embedded.uri());
    FreezableProxy proxy = closeLater(new FreezableProxy(embedded.port()));
    RabbitPublisher publisher =
        new RabbitPublisher(
            RabbitChannelSettings.of("amqp://guest:guest@127.0.0.1:" + proxy.port()));
    confirmed(publisher.publish(message(t.exchange, t.routingKey, 1)));
    proxy.freeze();
    List<CompletableFuture<Void>> pending = new ArrayList<>();
    for (int i = 2; i <= 4; i++) {
      pending.add(publisher.publish(message(t.exchange, t.routingKey, i)));
    }

    publisher.close();

    for (CompletableFuture<Void> f : pending) {
      assertThat(f).isDone();
      PublishFailure failure = failure(f);
      assertThat(failure.brokerDown()).isTrue();
      assertThat(failure.getMessage()).contains("closed");
    }
    assertThat(failure(publisher.publish(message(t.exchange, t.routingKey, 5))).brokerDown())
        .isTrue();
    assertThat(publisher.connected()).isFalse();
  }

  // ------------------------------------------------------------------ the way it works

  @ParameterizedTest(name = "{0}")
  @MethodSource("brokers")
  void everyMessageArrivesPersistentWithItsIdHeadersAndBody(Broker broker) throws Exception {
    Topology t = declare(broker.uri());
    RabbitPublisher publisher = publisher(broker.uri(), Duration.ofSeconds(10));
    assertThat(publisher.describe())
        .startsWith("rabbitmq amqp://127.0.0.1:")
        .doesNotContain("guest");

    int n = 300;
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    Map<String, byte[]> bodies = new HashMap<>();
    for (int i = 0; i < n; i++) {
      byte[] body = ("event " + i + " é").getBytes(StandardCharsets.UTF_8);
      Map<String, String> extra = Map.of(ChannelHeaders.TENANT, "tenant-" + (i % 7));
      OutboundMessage m = message(t.exchange, t.routingKey, i, body, extra);
      bodies.put(m.messageId(), body);
      futures.add(publisher.publish(m));
    }
    for (CompletableFuture<Void> f : futures) {
      confirmed(f);
    }

    List<Received> received = t.drain();
    assertThat(received).hasSize(n);
    for (int i = 0; i < n; i++) {
      Received r = received.get(i);
      assertThat(r.id).isEqualTo("0/orders/" + i + "/1");
      assertThat(r.deliveryMode).isEqualTo(2);
      assertThat(r.body).isEqualTo(bodies.get(r.id));
      assertThat(r.headers)
          .containsEntry(ChannelHeaders.SHARD, "0")
          .containsEntry(ChannelHeaders.QUEUE, "orders")
          .containsEntry(ChannelHeaders.ID, Integer.toString(i))
          .containsEntry(ChannelHeaders.ATTEMPT, "1")
          .containsEntry(ChannelHeaders.TENANT, "tenant-" + (i % 7))
          .containsKey(ChannelHeaders.DUE_NS);
    }
    assertThat(publisher.connected()).isTrue();
  }

  @Test
  void settingsCheckTheUriAndNeverPrintThePassword() {
    RabbitChannelSettings s =
        RabbitChannelSettings.of("amqp://user:s3cret@broker.example:5673/orders");
    assertThat(s.publishTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(s.connectionName()).isEqualTo("sluice");
    assertThat(s.redactedUri()).isEqualTo("amqp://broker.example:5673/orders");
    assertThat(s.toString()).doesNotContain("s3cret").doesNotContain("user");
    assertThatThrownBy(() -> RabbitChannelSettings.of("http://broker.example"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not an AMQP URI");
    assertThatThrownBy(() -> RabbitChannelSettings.of("amqp://h").withPublishTimeout(Duration.ZERO))
        .hasMessageContaining("out of range");
  }

  // ------------------------------------------------------------------ helpers

  private RabbitPublisher publisher(String uri, Duration timeout) {
    return closeLater(
        new RabbitPublisher(
            new RabbitChannelSettings(uri, timeout, "sluice-test-" + toClose.size())));
  }

  private <T extends AutoCloseable> T closeLater(T c) {
    toClose.add(c);
    return c;
  }

  private static OutboundMessage message(String exchange, String routingKey, int i) {
    return message(
        exchange, routingKey, i, ("event " + i).getBytes(StandardCharsets.UTF_8), Map.of());
  }

  private static OutboundMessage message(
      String exchange, String routingKey, int i, byte[] body, Map<String, String> extra) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(ChannelHeaders.SHARD, "0");
    headers.put(ChannelHeaders.QUEUE, "orders");
    headers.put(ChannelHeaders.ID, Integer.toString(i));
    headers.put(ChannelHeaders.ATTEMPT, "1");
    headers.put(ChannelHeaders.DUE_NS, Long.toString(1_700_000_000_000_000_000L + i));
    headers.putAll(extra);
    return new OutboundMessage(exchange, routingKey, null, headers, body, "0/orders/" + i + "/1");
  }

  private static void confirmed(CompletableFuture<Void> f) throws Exception {
    f.get(15, TimeUnit.SECONDS);
  }

  private static PublishFailure failure(CompletableFuture<Void> f)
      throws InterruptedException, TimeoutException {
    try {
      f.get(15, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(PublishFailure.class);
      return (PublishFailure) e.getCause();
    }
    throw new AssertionError("the publish was confirmed, a failure was expected");
  }

  /** One message as a consumer sees it. */
  record Received(String id, Integer deliveryMode, Map<String, String> headers, byte[] body) {}

  /** A durable direct exchange and a durable queue bound to it, deleted after the test. */
  private final class Topology {
    final String exchange;
    final String queue;
    final String routingKey = "due";
    final Connection admin;

    Topology(String uri) throws Exception {
      this(uri, null);
    }

    Topology(String uri, Map<String, Object> queueArguments) throws Exception {
      String suffix = Integer.toHexString(ThreadLocalRandom.current().nextInt());
      exchange = "sluice-test-x-" + suffix;
      queue = "sluice-test-q-" + suffix;
      ConnectionFactory f = new ConnectionFactory();
      f.setUri(uri);
      // No automatic recovery: after a broker restart (empty again) this connection stays closed
      // and the cleanup below skips it. Recovered, it raced the cleanup: deleting the queue the
      // restart removed closed the channel with 404.
      f.setAutomaticRecoveryEnabled(false);
      admin = f.newConnection("sluice-test-admin");
      try (Channel ch = admin.createChannel()) {
        ch.exchangeDeclare(exchange, "direct", true);
        ch.queueDeclare(queue, true, false, false, queueArguments);
        ch.queueBind(queue, exchange, routingKey);
      }
      closeLater(
          () -> {
            if (admin.isOpen()) {
              try (Channel ch = admin.createChannel()) {
                ch.queueDelete(queue);
                ch.exchangeDelete(exchange);
              } finally {
                admin.close();
              }
            }
          });
    }

    /** Everything in the queue now, in order. */
    List<Received> drain() throws Exception {
      List<Received> out = new ArrayList<>();
      try (Channel ch = admin.createChannel()) {
        for (GetResponse r; (r = ch.basicGet(queue, true)) != null; ) {
          Map<String, String> headers = new HashMap<>();
          if (r.getProps().getHeaders() != null) {
            r.getProps().getHeaders().forEach((k, v) -> headers.put(k, String.valueOf(v)));
          }
          out.add(
              new Received(
                  r.getProps().getMessageId(),
                  r.getProps().getDeliveryMode(),
                  headers,
                  r.getBody()));
        }
      }
      return out;
    }
  }

  private Topology declare(String uri) throws Exception {
    return new Topology(uri);
  }
}
