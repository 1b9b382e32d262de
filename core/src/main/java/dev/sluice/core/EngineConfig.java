package dev.sluice.core;

import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.config.TenantLimit;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What the queue engine needs of the manager's configuration: the shards, leadership timing and
 * tenant overrides. Built with {@link #builder()}, validated once at {@link Builder#build()} (the
 * errors name the field), then frozen.
 */
public final class EngineConfig {
  /** How often each shard is searched for new or changed queue tables. */
  public static final Duration DEFAULT_DISCOVERY_INTERVAL = Duration.ofSeconds(5);

  /** The bound on a graceful stop. */
  public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);

  /** How long a shard lease lasts without renewal. */
  public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(2);

  /** How often leases are renewed (and free ones sought): at most half of the lease's ttl. */
  public static final Duration DEFAULT_LEASE_RENEW = Duration.ofMillis(500);

  /** How long an outlet's id keeps its place after it detached. */
  public static final Duration DEFAULT_FORGET_DELAY = Duration.ZERO;

  private final String managerId;
  private final List<ShardConfig> shards;
  private final Duration discoveryInterval;
  private final Duration shutdownTimeout;
  private final Duration leaseTtl;
  private final Duration leaseRenew;
  private final Duration forgetDelay;
  private final List<TenantLimit> tenantLimits;

  private EngineConfig(Builder b) {
    this.managerId = b.managerId;
    this.shards = List.copyOf(b.shards);
    this.discoveryInterval = b.discoveryInterval;
    this.shutdownTimeout = b.shutdownTimeout;
    this.leaseTtl = b.leaseTtl;
    this.leaseRenew = b.leaseRenew;
    this.forgetDelay = b.forgetDelay;
    this.tenantLimits = List.copyOf(b.tenantLimits);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** This process's name among managers (logs, leases). */
  public String managerId() {
    return managerId;
  }

  /** The shards this manager may lead, at least one. */
  public List<ShardConfig> shards() {
    return shards;
  }

  /** How often each shard is searched for new or changed queue tables. */
  public Duration discoveryInterval() {
    return discoveryInterval;
  }

  /** The bound on a graceful stop. */
  public Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  /** How long a shard lease lasts without renewal. */
  public Duration leaseTtl() {
    return leaseTtl;
  }

  /** How often leases are renewed (and free ones sought). */
  public Duration leaseRenew() {
    return leaseRenew;
  }

  /** How long an outlet's id keeps its place after it detached. */
  public Duration forgetDelay() {
    return forgetDelay;
  }

  /** Per-tenant overrides of the queues' tenant limits. */
  public List<TenantLimit> tenantLimits() {
    return tenantLimits;
  }

  public List<TenantLimit> tenantLimitsFor(String queue) {
    return tenantLimits.stream().filter(t -> t.appliesTo(queue)).toList();
  }

  @Override
  public String toString() {
    // ShardConfig masks its password itself
    return "EngineConfig[managerId="
        + managerId
        + ", shards="
        + shards
        + ", discoveryInterval="
        + discoveryInterval
        + ", shutdownTimeout="
        + shutdownTimeout
        + ", leaseTtl="
        + leaseTtl
        + ", leaseRenew="
        + leaseRenew
        + ", forgetDelay="
        + forgetDelay
        + ", tenantLimits="
        + tenantLimits
        + "]";
  }

  /** Named settings, each with its {@code DEFAULT_*} but the manager's id and the shards. */
  public static final class Builder {
    private String managerId;
    private List<ShardConfig> shards = List.of();
    private Duration discoveryInterval = DEFAULT_DISCOVERY_INTERVAL;
    private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
    private Duration leaseTtl = DEFAULT_LEASE_TTL;
    private Duration leaseRenew = DEFAULT_LEASE_RENEW;
    private Duration forgetDelay = DEFAULT_FORGET_DELAY;
    private List<TenantLimit> tenantLimits = List.of();

    private Builder() {}

    public Builder managerId(String managerId) {
      this.managerId = managerId;
      return this;
    }

    public Builder shards(List<ShardConfig> shards) {
      this.shards = shards;
      return this;
    }

    public Builder shard(ShardConfig shard) {
      this.shards = List.of(shard);
      return this;
    }

    public Builder discoveryInterval(Duration d) {
      this.discoveryInterval = d;
      return this;
    }

    public Builder shutdownTimeout(Duration d) {
      this.shutdownTimeout = d;
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

    public Builder tenantLimits(List<TenantLimit> limits) {
      this.tenantLimits = limits;
      return this;
    }

    /**
     * The configuration, validated.
     *
     * @throws IllegalArgumentException naming the first field that is missing or out of bounds
     */
    public EngineConfig build() {
      if (managerId == null || managerId.isBlank()) {
        throw new IllegalArgumentException("managerId: must not be blank");
      }
      if (shards == null || shards.isEmpty()) {
        throw new IllegalArgumentException("shards: at least one shard is required");
      }
      Set<String> names = new HashSet<>();
      for (ShardConfig s : shards) {
        Objects.requireNonNull(s, "shards: a shard is null");
        if (!names.add(s.name())) {
          throw new IllegalArgumentException("shards: shard name '" + s.name() + "' repeats");
        }
      }
      positive("discoveryInterval", discoveryInterval);
      notNegative("shutdownTimeout", shutdownTimeout);
      positive("leaseTtl", leaseTtl);
      positive("leaseRenew", leaseRenew);
      if (leaseRenew.compareTo(leaseTtl.dividedBy(2)) > 0) {
        throw new IllegalArgumentException(
            "leaseRenew: must be at most half of leaseTtl (" + leaseTtl + "), was " + leaseRenew);
      }
      notNegative("forgetDelay", forgetDelay);
      if (tenantLimits == null) {
        throw new IllegalArgumentException("tenantLimits: must not be null (empty: none)");
      }
      return new EngineConfig(this);
    }

    private static void positive(String field, Duration d) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(field + ": must be positive, was " + d);
      }
    }

    private static void notNegative(String field, Duration d) {
      if (d == null || d.isNegative()) {
        throw new IllegalArgumentException(field + ": must not be negative, was " + d);
      }
    }
  }
}
