package dev.sluice.core.shard;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Why a shard is not served here, for health: given up for a fault (a dead worker, a write refused
 * by the fence) and not served again yet, its primary read-only, or its manager id used by another
 * live process. Volatile fields, no lock: written by the lease keeper's thread and by workers that
 * die, read by any thread.
 */
final class ShardHealth {
  private static final Logger log = LoggerFactory.getLogger(ShardHealth.class);

  private final String shard;
  private final Counter workerDeaths;

  /** The shard's primary refuses writes, as the lease keeper last read it. */
  private volatile boolean readOnly;

  /** Why the shard was given up for a fault, until it is served again; null when none. */
  private volatile String fault;

  /** Set while another live process uses this manager id; null otherwise. */
  private volatile String conflict;

  /** Told when {@link #reason()} changes. */
  private volatile Runnable changed = () -> {};

  ShardHealth(String shard, MeterRegistry registry) {
    this.shard = shard;
    this.workerDeaths = registry.counter("sluice.worker.deaths", "shard", shard);
    registry.gauge(
        "sluice.manager.id.conflict",
        Tags.of("shard", shard),
        this,
        s -> s.conflict != null ? 1 : 0);
  }

  /**
   * Why this shard is not served here for a fault: given up (a worker died) and not served again
   * yet, or refused because another live process uses this manager id. Null when none.
   */
  String reason() {
    String f = fault;
    if (f != null) {
      return f;
    }
    return readOnly
        ? "the primary is read-only (demoted?): no manager can serve the shard"
        : conflict;
  }

  void onChange(Runnable r) {
    this.changed = r;
  }

  /** The fault the shard was given up for, or null. */
  String fault() {
    return fault;
  }

  /** A worker thread died (or the lease keeper's): counted, and the shard is given up for it. */
  void workerDied(String why) {
    workerDeaths.increment();
    fault = why;
    changed.run();
  }

  /** A write of this term was refused by the fence: logged once per reason. */
  void fencedOff(String why) {
    if (!why.equals(fault)) {
      log.error("{}", why);
      fault = why;
      changed.run();
    }
  }

  /** The shard is served again (here, or by another manager: {@code by}): the fault is over. */
  void servedAgain(String by) {
    String f = fault;
    if (f == null) {
      return;
    }
    if (by == null) {
      log.info("shard {}: served again after: {}", shard, f);
    } else {
      log.info("shard {}: served by {} now; this manager is ready again after: {}", shard, by, f);
    }
    fault = null;
    changed.run();
  }

  /** The lease keeper read the primary's read-only flag: shown while it is set. */
  void readOnly(boolean readOnly) {
    this.readOnly = readOnly;
    log.warn(
        "shard {}: the primary is {}",
        shard,
        readOnly ? "read-only: the shard is not served" : "writable again");
    changed.run();
  }

  /** Another live process uses this manager id (null once it is this process's again). */
  void conflict(String why) {
    conflict = why;
    changed.run();
  }
}
