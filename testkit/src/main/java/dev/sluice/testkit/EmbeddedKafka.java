package dev.sluice.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import kafka.server.BrokerServer;
import kafka.server.KafkaConfig;
import kafka.server.SharedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An in-process Apache Kafka cluster (KRaft: one controller and one broker in this JVM), from
 * Kafka's own test kit ({@code org.apache.kafka:kafka-test-common-runtime}), for the tests, the
 * demo and the bench. Nothing needs to be installed and nothing is downloaded at run time; it
 * stores its logs in a temporary directory that {@link #close} deletes.
 *
 * <p>Clients reach the broker on 127.0.0.1 (plaintext, no authentication) at a port chosen at start
 * (or given) and kept for its life, so that {@link #stopBroker} and {@link #restartBroker} can take
 * the broker away from its clients and give it back at the same address, with its data (failure
 * tests). The controller stays up meanwhile. The kit also binds, for the broker's own use and for
 * the controller, two ports of its choosing on all interfaces.
 *
 * <p>The Kafka jars are optional dependencies of the testkit: a module that starts this declares
 * {@code org.apache.kafka:kafka-test-common-runtime} itself (test scope for tests).
 *
 * <p>Logging: the testkit ships no logging configuration. When the application logs with logback
 * and has configured none of them itself, the broker's own loggers ({@code kafka.*} and the server
 * packages of {@code org.apache.kafka}) are set to WARN at start; the client packages ({@code
 * org.apache.kafka.clients}) are left as the application has them.
 *
 * <p>Threads: the methods are synchronized; the broker runs on its own threads.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedKafka.class);

  /** The test kit numbers brokers from 0 and controllers from 3000. */
  private static final int BROKER_ID = 0;

  /**
   * The kit's own listener: it binds a port chosen by the kit on all interfaces, before the broker
   * starts, and ignores a port given in the broker's {@code listeners}. Clients never see it.
   */
  private static final String KIT_LISTENER = "EXTERNAL";

  /**
   * The clients' listener, on 127.0.0.1 and the port this class chooses or is given; clients that
   * bootstrap from it are told its address for the broker (Kafka answers with the endpoints of the
   * listener a request came in on).
   */
  private static final String CLIENT_LISTENER = "CLIENT";

  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

  /** The server-side loggers quietened at start (see the class comment). */
  private static final List<String> BROKER_LOGGERS =
      List.of(
          "kafka",
          "state.change.logger",
          "org.apache.kafka.common.test",
          "org.apache.kafka.controller",
          "org.apache.kafka.coordinator",
          "org.apache.kafka.image",
          "org.apache.kafka.metadata",
          "org.apache.kafka.network",
          "org.apache.kafka.queue",
          "org.apache.kafka.raft",
          "org.apache.kafka.security",
          "org.apache.kafka.server",
          "org.apache.kafka.snapshot",
          "org.apache.kafka.storage");

  private final KafkaClusterTestKit cluster;
  private final int port;
  private final Path baseDirectory;
  private boolean brokerRunning = true;
  private boolean closed;

  private EmbeddedKafka(KafkaClusterTestKit cluster, int port, Path baseDirectory) {
    this.cluster = cluster;
    this.port = port;
    this.baseDirectory = baseDirectory;
  }

  /** Starts a cluster whose broker listens on a free port. Takes a few seconds. */
  public static EmbeddedKafka start() {
    return start(0, Map.of());
  }

  /** Starts a cluster whose broker listens on {@code port} (0: a free one). */
  public static EmbeddedKafka start(int port) {
    return start(port, Map.of());
  }

  /**
   * Starts a cluster whose broker listens on {@code port} (0: a free one), with extra broker
   * configuration (e.g. {@code message.max.bytes}, {@code auto.create.topics.enable}). The listener
   * settings are this class's own and may not be given.
   */
  public static EmbeddedKafka start(int port, Map<String, String> brokerProperties) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " is not a TCP port");
    }
    for (String key : brokerProperties.keySet()) {
      if (key.contains("listener")) {
        throw new IllegalArgumentException(
            "broker property " + key + " is set by EmbeddedKafka (it listens on 127.0.0.1)");
      }
    }
    quietBrokerLoggers();
    long t0 = System.nanoTime();
    Path base = null;
    KafkaClusterTestKit cluster = null;
    boolean started = false;
    try {
      int brokerPort = port == 0 ? FreePorts.belowEphemeralRange() : port;
      base = Files.createTempDirectory("sluice-kafka-");
      TestKitNodes nodes =
          new TestKitNodes.Builder()
              .setCombined(false)
              .setNumControllerNodes(1)
              .setNumBrokerNodes(1)
              .setBaseDirectory(base)
              .setBrokerListenerName(new ListenerName(KIT_LISTENER))
              .setPerServerProperties(Map.of(BROKER_ID, brokerListeners(brokerPort)))
              .build();
      KafkaClusterTestKit.Builder builder =
          new KafkaClusterTestKit.Builder(nodes).setDeleteOnClose(true);
      Map<String, String> props = new HashMap<>();
      // One broker: the internal topics get one replica and one partition each.
      props.put("offsets.topic.replication.factor", "1");
      props.put("offsets.topic.num.partitions", "1");
      props.put("transaction.state.log.replication.factor", "1");
      props.put("transaction.state.log.min.isr", "1");
      props.put("transaction.state.log.num.partitions", "1");
      props.put("share.coordinator.state.topic.replication.factor", "1");
      props.put("share.coordinator.state.topic.min.isr", "1");
      props.put("group.initial.rebalance.delay.ms", "0");
      // A restarted broker registers anew once the controller dropped the old one's session: 3 s
      // instead of 9, so that a restart takes seconds.
      props.put("broker.session.timeout.ms", "3000");
      props.put("broker.heartbeat.interval.ms", "500");
      props.putAll(brokerProperties);
      props.forEach(builder::setConfigProp);
      cluster = builder.build();
      cluster.format();
      cluster.startup();
      cluster.waitForReadyBrokers();
      log.info(
          "embedded Kafka started on 127.0.0.1:{} in {} ms",
          brokerPort,
          (System.nanoTime() - t0) / 1_000_000);
      EmbeddedKafka kafka = new EmbeddedKafka(cluster, brokerPort, base);
      started = true;
      return kafka;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException(
          "could not start the embedded Kafka on port " + port + ": " + e, e);
    } finally {
      // Also after an Error (a Kafka jar missing from the class path): no broker or directory
      // is left behind.
      if (!started) {
        if (cluster != null) {
          closeQuietly(cluster);
        }
        TempTrees.deleteQuietly(base);
      }
    }
  }

  private static Map<String, String> brokerListeners(int port) {
    return Map.of(
        "listeners",
        KIT_LISTENER + "://localhost:0," + CLIENT_LISTENER + "://127.0.0.1:" + port,
        "listener.security.protocol.map",
        KIT_LISTENER + ":PLAINTEXT,CONTROLLER:PLAINTEXT," + CLIENT_LISTENER + ":PLAINTEXT");
  }

  /** "127.0.0.1:port": the bootstrap servers for clients. */
  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  /** The broker's port (the same across {@link #restartBroker}). */
  public int port() {
    return port;
  }

  /** Creates a topic with one replica; returns once its partitions have a leader. */
  public void createTopic(String name, int partitions) {
    createTopic(name, partitions, Map.of());
  }

  /**
   * Creates a topic with one replica and topic configuration (e.g. {@code max.message.bytes});
   * returns once its partitions have a leader.
   */
  public synchronized void createTopic(String name, int partitions, Map<String, String> configs) {
    requireBroker("create topic " + name);
    try (Admin admin = admin()) {
      admin
          .createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs)))
          .all()
          .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
      while (true) {
        if (hasLeaders(admin, name, partitions)) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("topic " + name + " has no leader after creation");
        }
        Thread.sleep(20);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while creating topic " + name, e);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new IllegalStateException("could not create topic " + name + ": " + cause, cause);
    }
  }

  /** Whether the broker knows the topic, with a leader for each partition. */
  private static boolean hasLeaders(Admin admin, String name, int partitions)
      throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
    TopicDescription d;
    try {
      d =
          admin
              .describeTopics(List.of(name))
              .allTopicNames()
              .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
              .get(name);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RetriableException) {
        return false; // the broker has not seen the new topic yet
      }
      throw e;
    }
    return d.partitions().size() == partitions
        && d.partitions().stream().map(TopicPartitionInfo::leader).allMatch(l -> l != null);
  }

  /** An admin client of this cluster; the caller closes it. */
  public Admin admin() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    p.put(AdminClientConfig.CLIENT_ID_CONFIG, "sluice-embedded-kafka-admin");
    return Admin.create(p);
  }

  /** Whether the broker runs (false between {@link #stopBroker} and {@link #restartBroker}). */
  public synchronized boolean brokerRunning() {
    return brokerRunning;
  }

  /**
   * Stops the broker (its port closes, its clients are disconnected); the controller and the data
   * stay. For failure tests.
   */
  public synchronized void stopBroker() {
    if (closed || !brokerRunning) {
      return;
    }
    long t0 = System.nanoTime();
    BrokerServer broker = cluster.brokers().get(BROKER_ID);
    broker.shutdown();
    broker.awaitShutdown();
    brokerRunning = false;
    log.info(
        "embedded Kafka broker on 127.0.0.1:{} stopped in {} ms",
        port,
        (System.nanoTime() - t0) / 1_000_000);
  }

  /**
   * Starts the broker again on the same port with its data, after {@link #stopBroker} (or restarts
   * a running one); returns once it serves.
   */
  public synchronized void restartBroker() {
    if (closed) {
      throw new IllegalStateException("the embedded Kafka is closed");
    }
    long t0 = System.nanoTime();
    try {
      BrokerServer old = cluster.brokers().get(BROKER_ID);
      if (!old.isShutdown()) {
        old.shutdown();
        old.awaitShutdown();
      }
      // A new broker on the old one's directories, listener and controller (what the kit's own
      // restartBroker, from Kafka 4.4 on, does). Its map of brokers is the kit's live one, so
      // close() stops the new broker.
      SharedServer previous = old.sharedServer();
      KafkaConfig config = new KafkaConfig(new HashMap<>(old.config().originals()), false);
      SharedServer shared =
          new SharedServer(
              config,
              previous.metaPropsEnsemble(),
              Time.SYSTEM,
              new Metrics(),
              previous.controllerQuorumVotersFuture(),
              previous.bootstrapServers(),
              previous.faultHandlerFactory(),
              previous.socketFactory());
      BrokerServer broker = new BrokerServer(shared);
      cluster.brokers().put(BROKER_ID, broker);
      broker.startup();
      cluster.waitForReadyBrokers();
      awaitListening();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while restarting the embedded Kafka broker", e);
    } catch (Exception e) {
      throw new IllegalStateException("could not restart the embedded Kafka broker: " + e, e);
    }
    brokerRunning = true;
    log.info(
        "embedded Kafka broker restarted on 127.0.0.1:{} in {} ms",
        port,
        (System.nanoTime() - t0) / 1_000_000);
  }

  /** Stops the cluster and deletes its data. */
  public synchronized void stop() {
    if (closed) {
      return;
    }
    closed = true;
    brokerRunning = false;
    closeQuietly(cluster);
    TempTrees.deleteQuietly(baseDirectory);
    log.info("embedded Kafka on 127.0.0.1:{} stopped", port);
  }

  @Override
  public void close() {
    stop();
  }

  private void requireBroker(String what) {
    if (closed || !brokerRunning) {
      throw new IllegalStateException("cannot " + what + ": the embedded Kafka broker is stopped");
    }
  }

  private void awaitListening() throws InterruptedException {
    long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
        return;
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the restarted broker does not listen on " + port, e);
        }
        Thread.sleep(20);
      }
    }
  }

  private static void closeQuietly(KafkaClusterTestKit cluster) {
    try {
      cluster.close();
    } catch (Exception e) {
      log.warn("embedded Kafka did not stop cleanly: {}", e.toString());
    }
  }

  private static void quietBrokerLoggers() {
    QuietLoggers.warn(BROKER_LOGGERS);
  }
}
