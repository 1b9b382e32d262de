package dev.sluice.manager.metrics;

import dev.sluice.db.store.StateCounts;
import dev.sluice.manager.QueueEngine;
import dev.sluice.manager.queue.QueueManager;
import dev.sluice.manager.queue.TenantStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples, every {@link #DEFAULT_EVERY}, what a scrape must not compute: each served queue's rows
 * by state (one query per queue, through {@link QueueManager#counts()}) and its busiest tenants'
 * live figures. A scrape or a status page request reads the last sample; it never queries the
 * database.
 *
 * <p>Meters (tags {@code shard}, {@code queue}):
 *
 * <ul>
 *   <li>{@code sluice_queue_events{state}} — rows by state
 *   <li>{@code sluice_queue_oldest_due_age_seconds} — how long the oldest due pending event waits
 *   <li>{@code sluice_queue_paused} — 1 while an operator has paused the queue
 *   <li>{@code sluice_tenant_queued_events}, {@code sluice_tenant_in_flight_events}, {@code
 *       sluice_tenant_events_dispatched_total} (tag {@code tenant}) — the {@link
 *       #MAX_TENANT_SERIES} tenants with most queued + in flight per queue, to bound cardinality
 * </ul>
 *
 * <p>Threads: {@link #run()} runs on the telemetry thread only; it publishes immutable maps through
 * volatile fields, which meters and HTTP threads read.
 */
public final class StateSampler implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(StateSampler.class);

  public static final Duration DEFAULT_EVERY = Duration.ofSeconds(5);

  /** Tenant series per queue; the rest are left out of the metrics (the status page too). */
  public static final int MAX_TENANT_SERIES = 50;

  /** One queue on one shard. */
  public record Key(String shard, String queue) {
    Tags tags() {
      return Tags.of("shard", shard, "queue", queue);
    }
  }

  /** A queue's rows by state, as last sampled. */
  public record Sample(StateCounts counts, long oldestDueAgeMs, long sampledAtMs) {}

  private record TenantKey(Key queue, String tenant) {}

  private final QueueEngine engine;
  private final MeterRegistry registry;
  private final MultiGauge events;
  private final MultiGauge oldestAge;
  private final MultiGauge paused;
  private final MultiGauge tenantQueued;
  private final MultiGauge tenantInFlight;
  private final Map<TenantKey, FunctionCounter> tenantDispatched = new HashMap<>();

  private volatile Map<Key, Sample> samples = Map.of();
  private volatile Map<Key, QueueManager> served = Map.of();
  private volatile Map<TenantKey, TenantStats> tenants = Map.of();

  private final java.time.Clock clock;

  public StateSampler(QueueEngine engine, MeterRegistry registry, java.time.Clock clock) {
    this.clock = clock;
    this.engine = engine;
    this.registry = registry;
    events =
        MultiGauge.builder("sluice_queue_events")
            .description("rows of the queue table by state (sampled)")
            .register(registry);
    oldestAge =
        MultiGauge.builder("sluice_queue_oldest_due_age_seconds")
            .description("how long the oldest due pending event has waited (sampled)")
            .register(registry);
    paused =
        MultiGauge.builder("sluice_queue_paused")
            .description("1 while an operator has paused the queue")
            .register(registry);
    tenantQueued =
        MultiGauge.builder("sluice_tenant_queued_events")
            .description("a tenant's events held in the window (busiest tenants only)")
            .register(registry);
    tenantInFlight =
        MultiGauge.builder("sluice_tenant_in_flight_events")
            .description("a tenant's events fired and not settled (busiest tenants only)")
            .register(registry);
  }

  /** The last sample of every served queue. */
  public Map<Key, Sample> samples() {
    return samples;
  }

  @Override
  public void run() {
    try {
      sample();
    } catch (RuntimeException e) {
      log.warn("metrics sampler failed, will retry: {}", e.toString(), e);
    }
  }

  private void sample() {
    Map<Key, QueueManager> now = new LinkedHashMap<>();
    for (QueueManager q : engine.served()) {
      now.put(new Key(q.shard(), q.queue()), q);
    }
    Map<Key, Sample> before = samples;
    Map<Key, Sample> next = new LinkedHashMap<>();
    Map<TenantKey, TenantStats> nextTenants = new LinkedHashMap<>();
    for (Map.Entry<Key, QueueManager> e : now.entrySet()) {
      QueueManager q = e.getValue();
      try {
        StateCounts c = q.counts();
        long nowNs = q.nowNs();
        long age =
            c.pending() == 0 || c.oldestDueNs() > nowNs ? 0 : (nowNs - c.oldestDueNs()) / 1_000_000;
        next.put(e.getKey(), new Sample(c, age, clock.millis()));
      } catch (RuntimeException ex) {
        registry.counter("sluice_db_errors", e.getKey().tags()).increment();
        log.debug("metrics: counting {} failed: {}", e.getKey(), ex.toString());
        Sample old = before.get(e.getKey());
        if (old != null) {
          next.put(e.getKey(), old);
        }
      }
      List<TenantStats> busiest = new ArrayList<>(q.tenants());
      busiest.sort(
          Comparator.comparingLong((TenantStats t) -> t.queued() + t.inFlight())
              .reversed()
              .thenComparing(TenantStats::tenant));
      for (TenantStats t : busiest.subList(0, Math.min(MAX_TENANT_SERIES, busiest.size()))) {
        nextTenants.put(new TenantKey(e.getKey(), t.tenant()), t);
      }
    }
    served = Map.copyOf(now);
    samples = next;
    tenants = nextTenants;
    publish(next.keySet(), nextTenants.keySet());
  }

  private void publish(Set<Key> queues, Set<TenantKey> tenantKeys) {
    List<MultiGauge.Row<?>> ev = new ArrayList<>();
    List<MultiGauge.Row<?>> age = new ArrayList<>();
    List<MultiGauge.Row<?>> pz = new ArrayList<>();
    for (Key k : queues) {
      for (String state : List.of("pending", "fired", "acked", "dead", "cancelled")) {
        ev.add(MultiGauge.Row.of(k.tags().and("state", state), () -> count(k, state)));
      }
      age.add(
          MultiGauge.Row.of(
              k.tags(),
              () -> {
                Sample s = samples.get(k);
                return s == null ? Double.NaN : s.oldestDueAgeMs() / 1000.0;
              }));
    }
    for (Key k : served.keySet()) {
      pz.add(
          MultiGauge.Row.of(
              k.tags(),
              () -> {
                QueueManager q = served.get(k);
                return q == null ? Double.NaN : q.paused() ? 1 : 0;
              }));
    }
    events.register(ev, false);
    oldestAge.register(age, false);
    paused.register(pz, false);

    List<MultiGauge.Row<?>> tq = new ArrayList<>();
    List<MultiGauge.Row<?>> tf = new ArrayList<>();
    for (TenantKey tk : tenantKeys) {
      Tags tags = tk.queue().tags().and("tenant", tk.tenant());
      tq.add(MultiGauge.Row.of(tags, () -> tenantValue(tk, TenantStats::queued)));
      tf.add(MultiGauge.Row.of(tags, () -> tenantValue(tk, TenantStats::inFlight)));
      tenantDispatched.computeIfAbsent(
          tk,
          k ->
              FunctionCounter.builder(
                      "sluice_tenant_events_dispatched",
                      this,
                      s -> s.tenantValue(k, TenantStats::dispatched))
                  .description("a tenant's events fired since the queue started (busiest only)")
                  .tags(tags)
                  .register(registry));
    }
    tenantQueued.register(tq, false);
    tenantInFlight.register(tf, false);
    Set<TenantKey> gone = new HashSet<>(tenantDispatched.keySet());
    gone.removeAll(tenantKeys);
    for (TenantKey k : gone) {
      registry.remove(tenantDispatched.remove(k));
    }
  }

  /**
   * Removes every meter this sampler registered (call on the telemetry thread's stop), so that a
   * manager restarted on the same registry does not report through a stopped one.
   */
  void removeMeters() {
    for (MultiGauge g : List.of(events, oldestAge, paused, tenantQueued, tenantInFlight)) {
      g.register(List.of(), true);
    }
    tenantDispatched.values().forEach(registry::remove);
    tenantDispatched.clear();
  }

  private double count(Key k, String state) {
    Sample s = samples.get(k);
    if (s == null) {
      return Double.NaN;
    }
    StateCounts c = s.counts();
    return switch (state) {
      case "pending" -> c.pending();
      case "fired" -> c.fired();
      case "acked" -> c.acked();
      case "dead" -> c.dead();
      default -> c.cancelled();
    };
  }

  private double tenantValue(TenantKey k, java.util.function.ToLongFunction<TenantStats> f) {
    TenantStats t = tenants.get(k);
    return t == null ? 0 : f.applyAsLong(t);
  }
}
