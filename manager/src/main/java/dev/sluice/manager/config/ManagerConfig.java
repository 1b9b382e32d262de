package dev.sluice.manager.config;

import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.config.TenantLimit;
import dev.sluice.db.QueueConfigException;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueOptions;
import dev.sluice.manager.security.SecurityConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The manager's configuration, validated once by {@link Builder#build()} and immutable after.
 *
 * @param managerId this process's name among managers (logs, leases)
 * @param grpcHost address the gRPC server binds
 * @param grpcPort gRPC port; 0 picks a free one
 * @param discoveryInterval how often each shard is searched for new or changed queue tables
 * @param shutdownTimeout the bound on a graceful stop
 * @param leaseTtl how long a shard lease lasts without renewal: the longest a dead manager's shards
 *     go undispatched
 * @param leaseRenew how often leases are renewed (and free ones sought)
 * @param forgetDelay how long a receiver id keeps its place after its last stream drops
 * @param httpHost address the HTTP server (status page, /metrics, /healthz) binds
 * @param httpPort HTTP port; 0 picks a free one
 * @param migrations the user's Flyway migration directory, for {@code sluice queue create} and
 *     {@code sluice migrate}
 * @param tenantLimits per-tenant overrides of the queues' tenant limits
 * @param security TLS, principals and grants, and the safe-default rule's switch
 * @param grpcKeepaliveTime how long a receiver's connection may be silent before the manager pings
 *     it (gRPC allows no less than 10 s)
 * @param grpcKeepaliveTimeout how long that ping may go unanswered before the connection is closed
 *     and its events are released: a receiver host that vanished (no FIN or RST) is found within
 *     the two together
 * @param channels the brokers queues may publish to, by name
 * @param queueOverrides per queue name, channel options ({@link QueueOptions#CHANNEL_OPTIONS}) as
 *     comments write them, which win over the table comment's: for DBAs who cannot change comments
 */
public record ManagerConfig(
    String managerId,
    String grpcHost,
    int grpcPort,
    List<ShardConfig> shards,
    Duration discoveryInterval,
    Duration shutdownTimeout,
    Duration leaseTtl,
    Duration leaseRenew,
    Duration forgetDelay,
    String httpHost,
    int httpPort,
    Path migrations,
    List<TenantLimit> tenantLimits,
    SecurityConfig security,
    Duration grpcKeepaliveTime,
    Duration grpcKeepaliveTimeout,
    List<ChannelConfig> channels,
    Map<String, Map<String, String>> queueOverrides) {

  public static final int DEFAULT_GRPC_PORT = 7470;

  /** Loopback: a manager is reachable from other hosts only when configured so. */
  public static final String DEFAULT_GRPC_HOST = "127.0.0.1";

  public static final Duration DEFAULT_DISCOVERY_INTERVAL = Duration.ofSeconds(5);
  public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);
  public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(2);
  public static final Duration DEFAULT_LEASE_RENEW = Duration.ofMillis(500);
  public static final Duration DEFAULT_FORGET_DELAY = Duration.ZERO;
  public static final String DEFAULT_HTTP_HOST = "127.0.0.1";
  public static final int DEFAULT_HTTP_PORT = 7471;
  public static final Path DEFAULT_MIGRATIONS = Path.of("db", "migration");

  /**
   * {@code <hostname>-<pid>-<4 hex digits>}: unique per process even where every container's
   * process is pid 1 (two live processes with one id are refused: the second does not lead).
   */
  static String defaultManagerId() {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException | RuntimeException e) {
      host = "manager";
    }
    return host
        + "-"
        + ProcessHandle.current().pid()
        + "-"
        + String.format("%04x", java.util.concurrent.ThreadLocalRandom.current().nextInt(0x10000));
  }

  /**
   * 10 s, the least gRPC allows, and 5 s: a vanished receiver's events come back within about 15 s,
   * well inside the default ack_wait (30 s), for one small ping per silent connection every 10 s.
   */
  public static final Duration DEFAULT_GRPC_KEEPALIVE_TIME = Duration.ofSeconds(10);

  public static final Duration DEFAULT_GRPC_KEEPALIVE_TIMEOUT = Duration.ofSeconds(5);

  public static Builder builder() {
    return new Builder();
  }

  /** The same configuration with the migration directory replaced. */
  public ManagerConfig withMigrations(Path dir) {
    return new ManagerConfig(
        managerId,
        grpcHost,
        grpcPort,
        shards,
        discoveryInterval,
        shutdownTimeout,
        leaseTtl,
        leaseRenew,
        forgetDelay,
        httpHost,
        httpPort,
        dir,
        tenantLimits,
        security,
        grpcKeepaliveTime,
        grpcKeepaliveTimeout,
        channels,
        queueOverrides);
  }

  /** The channel named {@code name}, if configured. */
  public Optional<ChannelConfig> channel(String name) {
    return channels.stream().filter(c -> c.name().equals(name)).findFirst();
  }

  /**
   * A queue's options: its table comment's ({@code fromComment}), with the configuration's {@code
   * queues.<queue>} settings in place of the comment's. The settings were checked when this
   * configuration was built.
   */
  public QueueOptions queueOptions(String queue, QueueOptions fromComment) {
    Map<String, String> o = queueOverrides.get(queue);
    return o == null || o.isEmpty()
        ? fromComment
        : fromComment.with(o, "queue " + queue + ": the manager configuration's queues." + queue);
  }

  /** What the queue engine needs of this configuration. */
  public dev.sluice.core.EngineConfig engine() {
    return new dev.sluice.core.EngineConfig(
        managerId,
        shards,
        discoveryInterval,
        shutdownTimeout,
        leaseTtl,
        leaseRenew,
        forgetDelay,
        tenantLimits);
  }

  /** The overrides that concern queue {@code queue}. */
  public List<TenantLimit> tenantLimitsFor(String queue) {
    return tenantLimits.stream().filter(t -> t.appliesTo(queue)).toList();
  }

  /** Builds and validates a {@link ManagerConfig}; errors name the field. */
  public static final class Builder {
    private String managerId;
    private String grpcHost = DEFAULT_GRPC_HOST;
    private int grpcPort = DEFAULT_GRPC_PORT;
    private final List<ShardConfig> shards = new ArrayList<>();
    private Duration discoveryInterval = DEFAULT_DISCOVERY_INTERVAL;
    private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
    private Duration leaseTtl = DEFAULT_LEASE_TTL;
    private Duration leaseRenew = DEFAULT_LEASE_RENEW;
    private Duration forgetDelay = DEFAULT_FORGET_DELAY;
    private Duration grpcKeepaliveTime = DEFAULT_GRPC_KEEPALIVE_TIME;
    private Duration grpcKeepaliveTimeout = DEFAULT_GRPC_KEEPALIVE_TIMEOUT;

    public Builder grpcKeepaliveTime(Duration d) {
      this.grpcKeepaliveTime = d;
      return this;
    }

    public Builder grpcKeepaliveTimeout(Duration d) {
      this.grpcKeepaliveTimeout = d;
      return this;
    }

    public Builder leaseTtl(Duration d) {
      this.leaseTtl = d;
      return this;
    }

    public Builder leaseRenew(Duration d) {
      this.leaseRenew = d;
      return this;
    }

    public Builder forgetDelay(Duration d) {
      this.forgetDelay = d;
      return this;
    }

    private String httpHost = DEFAULT_HTTP_HOST;
    private Integer httpPort;
    private Path migrations = DEFAULT_MIGRATIONS;
    private final List<TenantLimit> tenantLimits = new ArrayList<>();
    private SecurityConfig security = SecurityConfig.NONE;
    private final List<ChannelConfig> channels = new ArrayList<>();
    private final Map<String, Map<String, String>> queueOverrides = new LinkedHashMap<>();

    /** Adds a broker channel; names are unique. */
    public Builder channel(ChannelConfig c) {
      this.channels.add(c);
      return this;
    }

    /**
     * Sets channel options of queue {@code queue}, as comments write them ({@code channel} to
     * {@code events-kafka}); they win over its table comment's.
     */
    public Builder queueOverride(String queue, Map<String, String> options) {
      this.queueOverrides.put(queue, new LinkedHashMap<>(options));
      return this;
    }

    /** TLS, principals and grants; {@link SecurityConfig#NONE} (the default) has neither. */
    public Builder security(SecurityConfig s) {
      this.security = s;
      return this;
    }

    /** Adds a per-tenant override; a tenant may appear once per queue (and once for "*"). */
    public Builder tenantLimit(TenantLimit t) {
      this.tenantLimits.add(t);
      return this;
    }

    public Builder managerId(String id) {
      this.managerId = id;
      return this;
    }

    public Builder grpcHost(String host) {
      this.grpcHost = host;
      return this;
    }

    public Builder grpcPort(int port) {
      this.grpcPort = port;
      return this;
    }

    public Builder shard(ShardConfig s) {
      this.shards.add(s);
      return this;
    }

    public Builder shard(String name, String url, String user, String password) {
      return shard(new ShardConfig(name, url, user, password, ShardConfig.DEFAULT_POOL_SIZE));
    }

    public Builder discoveryInterval(Duration d) {
      this.discoveryInterval = d;
      return this;
    }

    public Builder shutdownTimeout(Duration d) {
      this.shutdownTimeout = d;
      return this;
    }

    public Builder httpHost(String host) {
      this.httpHost = host;
      return this;
    }

    /**
     * The HTTP port; 0 picks a free one. Unset, it is {@link #DEFAULT_HTTP_PORT} — or 0 when the
     * gRPC port is 0, so that managers started on free ports (tests, several in one process) never
     * collide on a fixed HTTP port.
     */
    public Builder httpPort(int port) {
      this.httpPort = port;
      return this;
    }

    public Builder migrations(Path dir) {
      this.migrations = dir;
      return this;
    }

    public ManagerConfig build() {
      if (grpcPort < 0 || grpcPort > 65535) {
        throw new IllegalArgumentException("grpc_port must be 0-65535, was " + grpcPort);
      }
      int http = httpPort != null ? httpPort : grpcPort == 0 ? 0 : DEFAULT_HTTP_PORT;
      if (http < 0 || http > 65535) {
        throw new IllegalArgumentException("http_port must be 0-65535, was " + http);
      }
      if (migrations == null) {
        throw new IllegalArgumentException("migrations must name a directory");
      }
      if (shards.isEmpty()) {
        throw new IllegalArgumentException("shards: at least one shard is required");
      }
      Set<String> names = new HashSet<>();
      for (ShardConfig s : shards) {
        if (!names.add(s.name())) {
          throw new IllegalArgumentException("shards: the name '" + s.name() + "' is used twice");
        }
      }
      if (discoveryInterval == null || discoveryInterval.toMillis() < 100) {
        throw new IllegalArgumentException(
            "discovery_interval must be at least 100ms, was " + discoveryInterval);
      }
      if (shutdownTimeout == null || shutdownTimeout.isNegative()) {
        throw new IllegalArgumentException(
            "shutdown_timeout must not be negative, was " + shutdownTimeout);
      }
      if (leaseTtl == null || leaseTtl.toMillis() < 500) {
        throw new IllegalArgumentException("lease_ttl must be at least 500ms, was " + leaseTtl);
      }
      if (leaseRenew == null
          || leaseRenew.isZero()
          || leaseRenew.compareTo(leaseTtl.dividedBy(2)) > 0) {
        throw new IllegalArgumentException(
            "lease_renew must be positive and at most half of lease_ttl ("
                + leaseTtl
                + "), was "
                + leaseRenew);
      }
      if (forgetDelay == null || forgetDelay.isNegative()) {
        throw new IllegalArgumentException("forget_delay must not be negative, was " + forgetDelay);
      }
      if (grpcKeepaliveTime == null
          || grpcKeepaliveTime.getSeconds() < 10
          || grpcKeepaliveTime.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException(
            "grpc_keepalive_time must be from 10s to 1h, was " + grpcKeepaliveTime);
      }
      if (grpcKeepaliveTimeout == null
          || grpcKeepaliveTimeout.toMillis() < 100
          || grpcKeepaliveTimeout.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException(
            "grpc_keepalive_timeout must be from 100ms to 1h, was " + grpcKeepaliveTimeout);
      }
      Set<String> limited = new HashSet<>();
      for (TenantLimit t : tenantLimits) {
        if (!limited.add(t.queue() + "\u0000" + t.tenant())) {
          throw new IllegalArgumentException(
              "tenant_limits: tenant '"
                  + t.tenant()
                  + "' is given twice for "
                  + (t.queue().equals(TenantLimit.ANY_QUEUE)
                      ? "every queue (\"*\")"
                      : "queue " + t.queue()));
        }
      }
      Set<String> channelNames = new HashSet<>();
      for (ChannelConfig c : channels) {
        if (!channelNames.add(c.name())) {
          throw new IllegalArgumentException("channels: the name '" + c.name() + "' is used twice");
        }
      }
      Map<String, Map<String, String>> overrides = new LinkedHashMap<>();
      queueOverrides.forEach(
          (queue, options) -> overrides.put(queue, checkOverride(queue, options)));
      String id = managerId;
      if (id == null || id.isBlank()) {
        id = defaultManagerId();
      }
      return new ManagerConfig(
          id,
          grpcHost,
          grpcPort,
          List.copyOf(shards),
          discoveryInterval,
          shutdownTimeout,
          leaseTtl,
          leaseRenew,
          forgetDelay,
          httpHost,
          http,
          migrations,
          List.copyOf(tenantLimits),
          security == null ? SecurityConfig.NONE : security,
          grpcKeepaliveTime,
          grpcKeepaliveTimeout,
          List.copyOf(channels),
          java.util.Collections.unmodifiableMap(overrides));
    }

    /** One queue's settings of the {@code queues} section, checked; the copy kept. */
    private Map<String, String> checkOverride(String queue, Map<String, String> options) {
      String where = "queues." + queue;
      QueueConvention.requireIdentifier(where + ": the queue name", queue);
      for (String key : options.keySet()) {
        if (!QueueOptions.CHANNEL_OPTIONS.contains(key)) {
          throw new IllegalArgumentException(
              where
                  + ": '"
                  + key
                  + "' cannot be set here (the configuration sets only "
                  + String.join(", ", QueueOptions.CHANNEL_OPTIONS)
                  + "; other options are the table comment's)");
        }
      }
      try {
        QueueOptions.defaults().with(options, where);
      } catch (QueueConfigException e) {
        throw new IllegalArgumentException(e.getMessage(), e);
      }
      String channel = options.get("channel");
      if (channel != null
          && !channel.isBlank()
          && channels.stream().noneMatch(c -> c.name().equals(channel.strip()))) {
        throw new IllegalArgumentException(
            where
                + ".channel: channel '"
                + channel
                + "' is not configured (channels: "
                + (channels.isEmpty()
                    ? "none"
                    : String.join(", ", channels.stream().map(ChannelConfig::name).toList()))
                + ")");
      }
      return Map.copyOf(options);
    }
  }
}
