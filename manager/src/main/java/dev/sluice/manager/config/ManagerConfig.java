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
 * <p>The scalar settings (ports, hosts, timings) are defined once in {@link ManagerSettings} and
 * held in {@code settings}; the accessors below read them from there.
 *
 * @param settings the values of the scalar settings ({@link ManagerSettings#ALL}), each checked
 * @param tenantLimits per-tenant overrides of the queues' tenant limits
 * @param security TLS, principals and grants, and the safe-default rule's switch
 * @param channels the brokers queues may publish to, by name
 * @param queueOverrides per queue name, channel options ({@link QueueOptions#CHANNEL_OPTIONS}) as
 *     comments write them, which win over the table comment's: for DBAs who cannot change comments
 */
public record ManagerConfig(
    SettingValues settings,
    List<ShardConfig> shards,
    List<TenantLimit> tenantLimits,
    SecurityConfig security,
    List<ChannelConfig> channels,
    Map<String, Map<String, String>> queueOverrides) {

  public static final int DEFAULT_HTTP_PORT = 7471;
  public static final Path DEFAULT_MIGRATIONS = ManagerSettings.MIGRATIONS.dflt();

  /** This process's name among managers (logs, leases). */
  public String managerId() {
    return settings.get(ManagerSettings.MANAGER_ID);
  }

  public String grpcHost() {
    return settings.get(ManagerSettings.GRPC_HOST);
  }

  public int grpcPort() {
    return settings.get(ManagerSettings.GRPC_PORT);
  }

  public Duration discoveryInterval() {
    return settings.get(ManagerSettings.DISCOVERY_INTERVAL);
  }

  public Duration shutdownTimeout() {
    return settings.get(ManagerSettings.SHUTDOWN_TIMEOUT);
  }

  public Duration leaseTtl() {
    return settings.get(ManagerSettings.LEASE_TTL);
  }

  public Duration leaseRenew() {
    return settings.get(ManagerSettings.LEASE_RENEW);
  }

  public Duration forgetDelay() {
    return settings.get(ManagerSettings.FORGET_DELAY);
  }

  public String httpHost() {
    return settings.get(ManagerSettings.HTTP_HOST);
  }

  public int httpPort() {
    return settings.get(ManagerSettings.HTTP_PORT);
  }

  /**
   * The user's Flyway migration directory ({@code sluice queue create}, {@code sluice migrate}).
   */
  public Path migrations() {
    return settings.get(ManagerSettings.MIGRATIONS);
  }

  public Duration grpcKeepaliveTime() {
    return settings.get(ManagerSettings.GRPC_KEEPALIVE_TIME);
  }

  public Duration grpcKeepaliveTimeout() {
    return settings.get(ManagerSettings.GRPC_KEEPALIVE_TIMEOUT);
  }

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

  public static Builder builder() {
    return new Builder();
  }

  /** The same configuration with the migration directory replaced. */
  public ManagerConfig withMigrations(Path dir) {
    return new ManagerConfig(
        settings.with(ManagerSettings.MIGRATIONS, dir),
        shards,
        tenantLimits,
        security,
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
    return dev.sluice.core.EngineConfig.builder()
        .managerId(managerId())
        .shards(shards)
        .discoveryInterval(discoveryInterval())
        .shutdownTimeout(shutdownTimeout())
        .leaseTtl(leaseTtl())
        .leaseRenew(leaseRenew())
        .forgetDelay(forgetDelay())
        .tenantLimits(tenantLimits)
        .build();
  }

  /** The overrides that concern queue {@code queue}. */
  public List<TenantLimit> tenantLimitsFor(String queue) {
    return tenantLimits.stream().filter(t -> t.appliesTo(queue)).toList();
  }

  /** Builds and validates a {@link ManagerConfig}; errors name the field. */
  public static final class Builder {
    private final Map<ManagerSetting<?>, Object> values = new LinkedHashMap<>();
    private final List<ShardConfig> shards = new ArrayList<>();

    /** Sets a scalar setting; its bounds are checked by {@link #build()}. */
    public <T> Builder set(ManagerSetting<T> setting, T value) {
      values.put(setting, value);
      return this;
    }

    public Builder grpcKeepaliveTime(Duration d) {
      return set(ManagerSettings.GRPC_KEEPALIVE_TIME, d);
    }

    public Builder grpcKeepaliveTimeout(Duration d) {
      return set(ManagerSettings.GRPC_KEEPALIVE_TIMEOUT, d);
    }

    public Builder leaseTtl(Duration d) {
      return set(ManagerSettings.LEASE_TTL, d);
    }

    public Builder leaseRenew(Duration d) {
      return set(ManagerSettings.LEASE_RENEW, d);
    }

    public Builder forgetDelay(Duration d) {
      return set(ManagerSettings.FORGET_DELAY, d);
    }

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
      return set(ManagerSettings.MANAGER_ID, id);
    }

    public Builder grpcHost(String host) {
      return set(ManagerSettings.GRPC_HOST, host);
    }

    public Builder grpcPort(int port) {
      return set(ManagerSettings.GRPC_PORT, port);
    }

    public Builder shard(ShardConfig s) {
      this.shards.add(s);
      return this;
    }

    public Builder shard(String name, String url, String user, String password) {
      return shard(new ShardConfig(name, url, user, password, ShardConfig.DEFAULT_POOL_SIZE));
    }

    public Builder discoveryInterval(Duration d) {
      return set(ManagerSettings.DISCOVERY_INTERVAL, d);
    }

    public Builder shutdownTimeout(Duration d) {
      return set(ManagerSettings.SHUTDOWN_TIMEOUT, d);
    }

    public Builder httpHost(String host) {
      return set(ManagerSettings.HTTP_HOST, host);
    }

    /**
     * The HTTP port; 0 picks a free one. Unset, it is {@link #DEFAULT_HTTP_PORT} — or 0 when the
     * gRPC port is 0, so that managers started on free ports (tests, several in one process) never
     * collide on a fixed HTTP port.
     */
    public Builder httpPort(int port) {
      return set(ManagerSettings.HTTP_PORT, port);
    }

    public Builder migrations(Path dir) {
      return set(ManagerSettings.MIGRATIONS, dir);
    }

    public ManagerConfig build() {
      Map<ManagerSetting<?>, Object> v = new LinkedHashMap<>();
      for (ManagerSetting<?> setting : ManagerSettings.ALL) {
        v.put(setting, values.containsKey(setting) ? values.get(setting) : setting.dflt());
      }
      if (v.get(ManagerSettings.HTTP_PORT) == null) {
        v.put(
            ManagerSettings.HTTP_PORT,
            (Integer) v.get(ManagerSettings.GRPC_PORT) == 0 ? 0 : DEFAULT_HTTP_PORT);
      }
      String id = (String) v.get(ManagerSettings.MANAGER_ID);
      if (id == null || id.isBlank()) {
        v.put(ManagerSettings.MANAGER_ID, defaultManagerId());
      }
      for (ManagerSetting<?> setting : ManagerSettings.ALL) {
        setting.check(v.get(setting));
      }
      Duration leaseTtl = (Duration) v.get(ManagerSettings.LEASE_TTL);
      Duration leaseRenew = (Duration) v.get(ManagerSettings.LEASE_RENEW);
      if (leaseRenew.compareTo(leaseTtl.dividedBy(2)) > 0) {
        throw new IllegalArgumentException(
            "lease_renew must be positive and at most half of lease_ttl ("
                + leaseTtl
                + "), was "
                + leaseRenew);
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
      return new ManagerConfig(
          new SettingValues(v),
          List.copyOf(shards),
          List.copyOf(tenantLimits),
          security == null ? SecurityConfig.NONE : security,
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
