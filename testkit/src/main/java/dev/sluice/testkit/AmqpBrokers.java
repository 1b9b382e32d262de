package dev.sluice.testkit;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * AMQP 0-9-1 brokers for tests: a RabbitMQ on 127.0.0.1:5672 (guest/guest) when it answers (unless
 * {@code SLUICE_TEST_AMQP_URI=embedded}), else one {@link EmbeddedAmqpBroker} shared by the whole
 * JVM. A test that stops its broker starts its own embedded one instead.
 *
 * <p>Needs {@code com.rabbitmq:amqp-client} on the class path (to log in to the local broker), and
 * the Qpid jars when no other broker answers (see {@link EmbeddedAmqpBroker}).
 */
public final class AmqpBrokers {
  private static final Logger log = LoggerFactory.getLogger(AmqpBrokers.class);

  /** Environment variable: {@code embedded} skips the local RabbitMQ. */
  public static final String ENV_URI = "SLUICE_TEST_AMQP_URI";

  /** A RabbitMQ installed on this machine with its default user. */
  public static final String LOCAL_URI = "amqp://guest:guest@127.0.0.1:5672";

  private static final int PROBE_TIMEOUT_MS = 2000;

  private static Optional<String> local;
  private static EmbeddedAmqpBroker shared;

  private AmqpBrokers() {}

  /**
   * {@link #LOCAL_URI} when a broker there takes a login as guest (asked once per JVM), empty when
   * nothing answers or {@link #ENV_URI} is {@code embedded}.
   */
  public static synchronized Optional<String> local() {
    if ("embedded".equals(System.getenv(ENV_URI))) {
      return Optional.empty();
    }
    if (local == null) {
      local = answers(LOCAL_URI) ? Optional.of(LOCAL_URI) : Optional.empty();
      log.info(
          "AMQP broker for tests: {}",
          local.isPresent()
              ? "the local RabbitMQ at 127.0.0.1:5672"
              : "embedded (no RabbitMQ answers at 127.0.0.1:5672)");
    }
    return local;
  }

  /** The embedded broker shared by this JVM, started on first use and stopped at exit. */
  public static synchronized EmbeddedAmqpBroker sharedEmbedded() {
    if (shared == null) {
      shared = EmbeddedAmqpBroker.start();
      EmbeddedAmqpBroker broker = shared;
      Runtime.getRuntime().addShutdownHook(new Thread(broker::close, "sluice-embedded-amqp-stop"));
    }
    return shared;
  }

  /** Whether an AMQP broker at the URI takes a login within two seconds. */
  public static boolean answers(String uri) {
    ConnectionFactory factory = new ConnectionFactory();
    try {
      factory.setUri(uri);
    } catch (Exception e) {
      throw new IllegalArgumentException("not an AMQP URI: " + e.getMessage(), e);
    }
    factory.setAutomaticRecoveryEnabled(false);
    factory.setConnectionTimeout(PROBE_TIMEOUT_MS);
    factory.setHandshakeTimeout(PROBE_TIMEOUT_MS);
    factory.setShutdownTimeout(0);
    try (Connection c = factory.newConnection("sluice-test-probe")) {
      return c.isOpen();
    } catch (Exception e) {
      log.debug("no AMQP broker answers at {}:{}: {}", factory.getHost(), factory.getPort(), e);
      return false;
    }
  }
}
