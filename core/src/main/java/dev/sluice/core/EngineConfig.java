package dev.sluice.core;

import dev.sluice.core.config.ShardConfig;
import dev.sluice.core.config.TenantLimit;
import java.time.Duration;
import java.util.List;

/**
 * What the queue engine needs of the manager's configuration: the shards, leadership timing and
 * tenant overrides. Validated by whoever builds it (the manager's configuration loader).
 *
 * @param managerId this process's name among managers (logs, leases)
 * @param discoveryInterval how often each shard is searched for new or changed queue tables
 * @param shutdownTimeout the bound on a graceful stop
 * @param leaseTtl how long a shard lease lasts without renewal
 * @param leaseRenew how often leases are renewed (and free ones sought)
 * @param forgetDelay how long an outlet's id keeps its place after it detached
 * @param tenantLimits per-tenant overrides of the queues' tenant limits
 */
public record EngineConfig(
    String managerId,
    List<ShardConfig> shards,
    Duration discoveryInterval,
    Duration shutdownTimeout,
    Duration leaseTtl,
    Duration leaseRenew,
    Duration forgetDelay,
    List<TenantLimit> tenantLimits) {

  public List<TenantLimit> tenantLimitsFor(String queue) {
    return tenantLimits.stream().filter(t -> t.appliesTo(queue)).toList();
  }
}
