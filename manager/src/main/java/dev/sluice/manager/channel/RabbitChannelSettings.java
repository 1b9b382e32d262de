package dev.sluice.manager.channel;

import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ExceptionHandler;
import com.rabbitmq.client.SocketConfigurators;
import java.net.Socket;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * How a {@link RabbitPublisher} reaches its broker.
 *
 * @param uri {@code amqp://user:pass@host:port/vhost} ({@code amqps://} for TLS, checked against
 *     the JVM's trust store with host name verification). Without a path the virtual host is "/";
 *     "/" itself is written {@code %2F}. The password is never printed.
 * @param publishTimeout how long a message may wait for the broker's confirmation; every publish
 *     future completes within it (plus a small slack). Also bounds connecting, the AMQP handshake
 *     and channel operations. Default 10 s; null means the default.
 * @param connectionName the name the broker shows for the connection (management UI, logs); null or
 *     blank means "sluice"
 */
public record RabbitChannelSettings(String uri, Duration publishTimeout, String connectionName) {

  public static final Duration DEFAULT_PUBLISH_TIMEOUT = Duration.ofSeconds(10);

  /** The shortest publish timeout accepted. */
  public static final Duration MIN_PUBLISH_TIMEOUT = Duration.ofMillis(100);

  public RabbitChannelSettings {
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException("rabbitmq channel: the broker URI is missing");
    }
    uri = uri.strip();
    if (publishTimeout == null) {
      publishTimeout = DEFAULT_PUBLISH_TIMEOUT;
    }
    if (publishTimeout.compareTo(MIN_PUBLISH_TIMEOUT) < 0
        || publishTimeout.toMillis() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "rabbitmq channel "
              + redact(uri)
              + ": publish timeout "
              + publishTimeout.toMillis()
              + " ms is out of range (at least "
              + MIN_PUBLISH_TIMEOUT.toMillis()
              + " ms)");
    }
    if (connectionName == null || connectionName.isBlank()) {
      connectionName = "sluice";
    }
    // Checks the URI now, not at the first connection.
    applyUri(new ConnectionFactory(), uri);
  }

  /** Settings with the default timeout and connection name "sluice". */
  public static RabbitChannelSettings of(String uri) {
    return new RabbitChannelSettings(uri, null, null);
  }

  public RabbitChannelSettings withPublishTimeout(Duration timeout) {
    return new RabbitChannelSettings(uri, timeout, connectionName);
  }

  /** The URI without user and password: "amqp://127.0.0.1:5672/vhost". */
  public String redactedUri() {
    return redact(uri);
  }

  /**
   * The client's factory for this broker: host, port, credentials, virtual host and TLS from the
   * URI; connecting, the AMQP handshake and channel operations bounded by the publish timeout; a
   * heartbeat timeout of half of it (1 to 30 s); the client's automatic recovery off (the publisher
   * reconnects itself); daemon I/O threads. {@code onSocket} sees every socket the client opens,
   * once the defaults are set on it.
   */
  ConnectionFactory connectionFactory(Consumer<Socket> onSocket, ExceptionHandler handler) {
    ConnectionFactory factory = new ConnectionFactory();
    // Before the URI: amqps adds host name verification to this configurator.
    factory.setSocketConfigurator(
        socket -> {
          SocketConfigurators.defaultConfigurator().configure(socket);
          onSocket.accept(socket);
        });
    applyUri(factory, uri);
    long timeoutMs = publishTimeout.toMillis();
    int timeout = (int) timeoutMs;
    factory.setAutomaticRecoveryEnabled(false);
    factory.setTopologyRecoveryEnabled(false);
    factory.setConnectionTimeout(timeout);
    factory.setHandshakeTimeout(timeout);
    factory.setChannelRpcTimeout(timeout);
    factory.setRequestedHeartbeat((int) Math.max(1, Math.min(30, timeoutMs / 2000)));
    factory.setExceptionHandler(handler);
    String name = connectionName;
    factory.setThreadFactory(
        r -> {
          Thread t = new Thread(r, "sluice-rabbit-io-" + name); // the client renames it
          t.setDaemon(true);
          return t;
        });
    return factory;
  }

  private static void applyUri(ConnectionFactory factory, String uri) {
    try {
      factory.setUri(uri);
    } catch (URISyntaxException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "rabbitmq channel " + redact(uri) + ": not an AMQP URI: " + e.getMessage(), e);
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "rabbitmq channel " + redact(uri) + ": cannot set up TLS: " + e.getMessage(), e);
    }
  }

  private static String redact(String uri) {
    try {
      URI u = new URI(uri);
      if (u.getHost() == null) {
        return "(an unreadable URI)";
      }
      String scheme = u.getScheme() == null ? "amqp" : u.getScheme();
      String port = u.getPort() < 0 ? "" : ":" + u.getPort();
      String path = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath();
      return scheme + "://" + u.getHost() + port + path;
    } catch (URISyntaxException e) {
      return "(an unreadable URI)";
    }
  }

  /** Without the URI's user and password. */
  @Override
  public String toString() {
    return "RabbitChannelSettings[uri="
        + redactedUri()
        + ", publishTimeout="
        + publishTimeout
        + ", connectionName="
        + connectionName
        + "]";
  }
}
