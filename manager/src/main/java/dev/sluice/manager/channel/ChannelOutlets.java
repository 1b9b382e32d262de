package dev.sluice.manager.channel;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.QueueListener;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.db.QueueTable;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.manager.config.ManagerConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manager's channels: one {@link ChannelPublisher} per configured channel (built at start,
 * connecting on its own threads), and for every queue bound to a channel, on every shard that
 * starts serving it, a {@link ChannelOutlet} attached to it. A queue whose binding is wrong (a
 * channel not configured, a column the table lacks...) is not served, with the reason.
 *
 * <p>Threads: {@link #problem} and {@link #started} run on a shard's maintenance thread (under its
 * monitor: they do not block); {@link #status} on any.
 */
public final class ChannelOutlets implements QueueListener, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ChannelOutlets.class);

  private final ManagerConfig config;
  private final QueueEngine engine;
  private final MeterRegistry registry;
  private final Map<String, ChannelPublisher> publishers = new LinkedHashMap<>();

  /** Per queue and shard, what its channel did (kept across restarts of the queue). */
  private final Map<String, ChannelStats> stats = new ConcurrentHashMap<>();

  /** Per queue: the binding last resolved (for the status page and receivers' subscribe). */
  private final Map<String, ChannelBinding> bindings = new ConcurrentHashMap<>();

  public ChannelOutlets(ManagerConfig config, QueueEngine engine, MeterRegistry registry) {
    this.config = config;
    this.engine = engine;
    this.registry = registry;
    for (ChannelConfig c : config.channels()) {
      ChannelPublisher p = publisher(c, config.managerId());
      p.registerMetrics(registry, c.name());
      publishers.put(c.name(), p);
      log.info("channel {}: {}", c.name(), publishers.get(c.name()).describe());
    }
  }

  /**
   * The publisher a manager builds for channel {@code c}: its Kafka settings or URI and publish
   * timeout, with the client id (Kafka) or connection name (RabbitMQ) {@code sluice-<manager
   * id>-<channel>}. Public for the benchmark's broker floor.
   */
  public static ChannelPublisher publisher(ChannelConfig c, String managerId) {
    String client = "sluice-" + managerId + "-" + c.name();
    return switch (c.kind()) {
      case KAFKA -> new KafkaPublisher(c.kafkaSettings().withClientId(client));
      case RABBITMQ ->
          new RabbitPublisher(new RabbitChannelSettings(c.uri(), c.publishTimeout(), client));
    };
  }

  @Override
  public String problem(String shard, QueueTable table) {
    ChannelBinding.Check check = ChannelBinding.check(table, config);
    if (check.binding() != null) {
      bindings.put(table.name(), check.binding());
    } else {
      bindings.remove(table.name());
    }
    return check.problem();
  }

  @Override
  public void started(QueueManager queue) {
    ChannelBinding.Check check = ChannelBinding.check(queue.table(), config);
    ChannelBinding b = check.binding();
    if (b == null) {
      return;
    }
    ChannelPublisher p = publishers.get(b.channel().name());
    ChannelStats s =
        stats.computeIfAbsent(
            queue.queue() + "@" + queue.shard(),
            k -> new ChannelStats(registry, b.channel().name(), queue.queue(), queue.shard()));
    ChannelOutlet outlet =
        new ChannelOutlet(
            b, p, engine.outcomes(queue.queue(), queue.shard()), s, queue.queue(), queue.shard());
    queue.attach(outlet);
    log.info("shard {}: {}", queue.shard(), b.describe());
  }

  /** Whether gRPC receivers may subscribe to {@code queue} (it has no channel, or allows them). */
  public boolean acceptsReceivers(String queue) {
    ChannelBinding b = bindings.get(queue);
    return b == null || b.receivers();
  }

  /** The binding of {@code queue}, if it publishes to a channel. */
  public ChannelBinding binding(String queue) {
    return bindings.get(queue);
  }

  /** Per queue and shard bound to a channel: its figures, for the status page. */
  public List<Map<String, Object>> status() {
    List<Map<String, Object>> out = new ArrayList<>();
    stats.forEach(
        (key, s) -> {
          String[] qs = key.split("@", 2);
          ChannelBinding b = bindings.get(qs[0]);
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("queue", qs[0]);
          m.put("shard", qs[1]);
          m.put("channel", b == null ? "" : b.channel().name());
          m.put("destination", b == null ? "" : b.describe());
          m.put("up", !s.down());
          m.put("published", s.publishedTotal());
          m.put("failures", s.failuresTotal());
          m.put("last_error", s.lastError());
          out.add(m);
        });
    out.sort(
        (a, b) ->
            (a.get("queue") + "@" + a.get("shard"))
                .compareTo(b.get("queue") + "@" + b.get("shard")));
    return out;
  }

  /** Fails what is still unconfirmed (its events come back after their ack deadline). */
  @Override
  public void close() {
    publishers.values().forEach(ChannelPublisher::close);
  }
}
