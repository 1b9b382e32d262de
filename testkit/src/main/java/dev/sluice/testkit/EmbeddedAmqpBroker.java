package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.qpid.server.SystemLauncher;
import org.apache.qpid.server.SystemLauncherListener;
import org.apache.qpid.server.model.Broker;
import org.apache.qpid.server.model.Port;
import org.apache.qpid.server.model.SystemConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An AMQP 0-9-1 broker in this JVM (Apache Qpid Broker-J with its in-memory store), for the tests,
 * the demo and the bench: RabbitMQ's clients talk to it as to a RabbitMQ server (exchanges, queues,
 * publisher confirms, mandatory returns, channel errors). Nothing needs to be installed and nothing
 * is downloaded at run time.
 *
 * <p>It listens on 127.0.0.1 only, with one user, guest/guest, and one virtual host that every
 * virtual host name reaches ("/" included). It starts empty: exchanges and queues are declared by
 * the clients. Its work directory is a temporary directory that {@link #close} deletes.
 *
 * <p>{@link #stop} takes the broker away from its clients (their connections are closed by the
 * broker) and {@link #restart} brings it back on the same port, for failure tests. The store is in
 * memory: a restarted broker is empty again.
 *
 * <p>The Qpid jars are optional dependencies of the testkit: a module that starts this declares
 * {@code org.apache.qpid:qpid-broker-core}, {@code qpid-broker-plugins-amqp-0-8-protocol} and
 * {@code qpid-broker-plugins-memory-store} itself (test scope for tests).
 *
 * <p>Logging: the testkit ships no logging configuration. When the application logs with logback
 * and has set no level for them, the broker's loggers ({@code org.apache.qpid}, {@code qpid}) are
 * set to WARN at start: the broker logs every connection and channel otherwise.
 *
 * <p>Threads: the methods are synchronized; the broker runs on its own threads.
 */
public final class EmbeddedAmqpBroker implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedAmqpBroker.class);

  public static final String USER = "guest";
  public static final String PASSWORD = "guest";

  /** The loggers quietened at start (see the class comment). */
  private static final List<String> BROKER_LOGGERS = List.of("org.apache.qpid", "qpid");

  private final Path workDir;
  private final long maxMessageSize;
  private int port;
  private SystemLauncher launcher;

  private EmbeddedAmqpBroker(Path workDir, int port, long maxMessageSize) {
    this.workDir = workDir;
    this.port = port;
    this.maxMessageSize = maxMessageSize;
  }

  /** A broker on a free port with the default limits. */
  public static EmbeddedAmqpBroker start() {
    return builder().start();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** How to start an {@link EmbeddedAmqpBroker}. */
  public static final class Builder {
    private int port;
    private long maxMessageSize;

    private Builder() {}

    /** The port on 127.0.0.1; 0 (the default) takes a free one. */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port " + port + " is out of range");
      }
      this.port = port;
      return this;
    }

    /**
     * The largest message body the broker takes, in bytes; a larger one closes the publisher's
     * channel with error 311 (message too large). 0 (the default) keeps the broker's own limit (100
     * MiB).
     */
    public Builder maxMessageSize(long bytes) {
      if (bytes < 0 || bytes > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("max message size " + bytes + " is out of range");
      }
      this.maxMessageSize = bytes;
      return this;
    }

    public EmbeddedAmqpBroker start() {
      Path dir;
      try {
        dir = Files.createTempDirectory("sluice-amqp-");
      } catch (IOException e) {
        throw new UncheckedIOException("could not create the embedded AMQP broker's directory", e);
      }
      EmbeddedAmqpBroker broker = new EmbeddedAmqpBroker(dir, port, maxMessageSize);
      try {
        broker.restart();
        return broker;
      } catch (RuntimeException | Error e) {
        broker.close();
        throw e;
      }
    }
  }

  /** The port on 127.0.0.1, kept across {@link #stop} and {@link #restart}. */
  public synchronized int port() {
    return port;
  }

  /** {@code amqp://guest:guest@127.0.0.1:<port>} (the virtual host "/"). */
  public synchronized String uri() {
    return "amqp://" + USER + ":" + PASSWORD + "@127.0.0.1:" + port;
  }

  public synchronized boolean running() {
    return launcher != null;
  }

  /**
   * Starts the broker again on its port after {@link #stop}, empty; does nothing when it runs.
   * Fails if another process took the port meanwhile.
   */
  public synchronized void restart() {
    if (launcher != null) {
      return;
    }
    quietBrokerLoggers();
    long t0 = System.nanoTime();
    AtomicReference<SystemConfig<?>> system = new AtomicReference<>();
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    SystemLauncher candidate =
        new SystemLauncher(
            new SystemLauncherListener.DefaultSystemLauncherListener() {
              @Override
              public void onContainerResolve(SystemConfig<?> systemConfig) {
                system.set(systemConfig);
              }

              @Override
              public void errorOnStartup(RuntimeException e) {
                failure.set(e);
              }
            });
    try {
      Path config = workDir.resolve("initial-config.json");
      Files.writeString(config, initialConfig(port), StandardCharsets.UTF_8);
      Map<String, String> context = new HashMap<>();
      context.put("qpid.work_dir", workDir.toString());
      context.put("qpid.broker.defaultPreferenceStoreAttributes", "{\"type\": \"Noop\"}");
      if (maxMessageSize > 0) {
        context.put("qpid.max_message_size", Long.toString(maxMessageSize));
      }
      Map<String, Object> attributes = new HashMap<>();
      attributes.put("type", "Memory");
      attributes.put("initialConfigurationLocation", config.toUri().toURL().toExternalForm());
      attributes.put("startupLoggedToSystemOut", false);
      attributes.put("context", context);
      candidate.startup(attributes);
    } catch (Exception e) {
      throw new IllegalStateException(
          "could not start the embedded AMQP broker on 127.0.0.1:" + port + ": " + e, e);
    }
    if (failure.get() != null || system.get() == null) {
      RuntimeException e = failure.get();
      throw new IllegalStateException(
          "could not start the embedded AMQP broker on 127.0.0.1:"
              + port
              + (e == null ? "" : ": " + e.getMessage()),
          e);
    }
    int bound = boundPort(system.get());
    if (bound <= 0) {
      candidate.shutdown();
      throw new IllegalStateException(
          "the embedded AMQP broker started but does not listen on 127.0.0.1:"
              + port
              + " (taken by another process?)");
    }
    launcher = candidate;
    port = bound;
    log.info(
        "embedded AMQP broker (Qpid Broker-J) listening on 127.0.0.1:{} in {} ms",
        port,
        (System.nanoTime() - t0) / 1_000_000);
  }

  /** Stops the broker; its clients' connections are closed, the port is kept for restart. */
  public synchronized void stop() {
    if (launcher == null) {
      return;
    }
    try {
      launcher.shutdown();
    } catch (RuntimeException e) {
      log.warn("embedded AMQP broker on 127.0.0.1:{} did not stop cleanly: {}", port, e.toString());
    }
    launcher = null;
    log.info("embedded AMQP broker on 127.0.0.1:{} stopped", port);
  }

  /** Stops the broker and deletes its directory. */
  @Override
  public synchronized void close() {
    stop();
    TempTrees.deleteQuietly(workDir);
  }

  private static int boundPort(SystemConfig<?> system) {
    if (!(system.getContainer() instanceof Broker<?> broker)) {
      return -1;
    }
    for (Port<?> p : broker.getChildren(Port.class)) {
      if ("AMQP".equals(p.getName())) {
        return p.getBoundPort();
      }
    }
    return -1;
  }

  /**
   * The broker's configuration: PLAIN logins also without TLS (Qpid allows them only over TLS by
   * default; RabbitMQ's clients use PLAIN), AMQP 0-8 to 0-9-1 on 127.0.0.1, one in-memory virtual
   * host that the names "" and "/" (Qpid drops the slash) and its own name reach.
   */
  private static String initialConfig(int port) {
    return """
        {
          "name": "sluice-embedded-amqp",
          "modelVersion": "9.1",
          "authenticationproviders": [ {
            "name": "plain",
            "type": "Plain",
            "secureOnlyMechanisms": [],
            "users": [ { "name": "%s", "type": "managed", "password": "%s" } ]
          } ],
          "ports": [ {
            "name": "AMQP",
            "type": "AMQP",
            "port": %d,
            "bindingAddress": "127.0.0.1",
            "protocols": [ "AMQP_0_8", "AMQP_0_9", "AMQP_0_9_1" ],
            "authenticationProvider": "plain",
            "virtualhostaliases": [
              { "name": "nameAlias", "type": "nameAlias" },
              { "name": "defaultAlias", "type": "defaultAlias" }
            ]
          } ],
          "virtualhostnodes": [ {
            "name": "default",
            "type": "Memory",
            "defaultVirtualHostNode": "true",
            "virtualHostInitialConfiguration": "{ \\"type\\": \\"Memory\\" }"
          } ]
        }
        """
        .formatted(USER, PASSWORD, port);
  }

  private static void quietBrokerLoggers() {
    QuietLoggers.warn(BROKER_LOGGERS);
  }
}
