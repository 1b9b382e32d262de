package dev.sluice.manager.metrics;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.fairness.TenantStats;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.store.GroupStore;
import dev.sluice.db.store.StateCounts;
import dev.sluice.db.store.Stores;
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
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples, every {@link #DEFAULT_EVERY}, what a scrape must not compute: each served queue's oldest
 * due pending event (one index seek), its rows by state, and its busiest tenants' live figures. A
 * scrape or a status page request reads the last sample; it never queries the database.
 *
 * <p>Counting rows by state reads every row of the table — the backlog, and a day of acked history
 * by default — so its cost grows with the table. A queue is counted again after a second per {@link
 * #COUNT_ROWS_PER_SECOND} rows it had (and no sooner than the next sample): about 0.1% of a
 * database core at the millions of index entries a second a scan reads, so a table of millions is
 * counted every few minutes instead of scanned without pause, and a large backlog does not slow
 * every other statement every few seconds. The oldest due age, what alerts watch, stays fresh at
 * every sample; the status page says how old the counts are.
 *
 * <p>Per shard, the open event groups (README, "Event groups": sealed, waiting for their children):
 * how many and the {@link #OLDEST_GROUPS} oldest, in one query on the ({@code state}, {@code
 * sealed_ns}) index of {@code sluice_group}; a shard without open groups (or without the table) has
 * none in {@link #groups()}.
 *
 * <p>Meters (tags {@code shard}, {@code queue}):
 *
 * <ul>
 *   <li>{@code sluice_queue_events{state}} — rows by state ({@code other}: a state none of
 *       Sluice's, written by hand)
 *   <li>{@code sluice_queue_oldest_due_age_seconds} — how long the oldest due pending event waits
 *   <li>{@code sluice_queue_paused} — 1 while an operator has paused the queue
 *   <li>{@code sluice_tenant_queued_events}, {@code sluice_tenant_in_flight_events}, {@code
 *       sluice_tenant_events_dispatched_total}, {@code sluice_tenant_wait_seconds_total} (due →
 *       fired, added up: over the dispatched count, the mean wait) and {@code
 *       sluice_tenant_wait_seconds_max} (the longest wait in the last 10–20 s) (tag {@code tenant})
 *       — the {@link #MAX_TENANT_SERIES} tenants with most queued + in flight per queue, to bound
 *       cardinality
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

  /**
   * A queue's last sample.
   *
   * @param counts rows by state, as counted at {@code countedAtMs}
   * @param oldestDueAgeMs how long the oldest due pending event had waited at {@code sampledAtMs}
   */
  public record Sample(
      StateCounts counts, long oldestDueAgeMs, long sampledAtMs, long countedAtMs) {}

  /** Open groups listed per shard, oldest first. */
  public static final int OLDEST_GROUPS = 5;

  /** An open event group: sealed {@code ageMs} ago (database clock), its completion event. */
  public record OpenGroup(String key, String completionQueue, long completionId, long ageMs) {}

  /** A shard's open event groups: how many, and the oldest few. */
  public record Groups(long open, List<OpenGroup> oldest) {}

  /** Rows counted per second of waiting between counts. */
  static final long COUNT_ROWS_PER_SECOND = 10_000;

  /**
   * When a queue may be counted again: at the next sample, or a second per {@link
   * #COUNT_ROWS_PER_SECOND} rows of its last count if that is later.
   */
  static long nextCountAtMs(long countedAtMs, long everyMs, StateCounts c) {
    long rows = c.pending() + c.fired() + c.acked() + c.dead() + c.cancelled();
    return countedAtMs + Math.max(everyMs, rows * 1000 / COUNT_ROWS_PER_SECOND);
  }

  private record TenantKey(Key queue, String tenant) {}

  private final QueueEngine engine;
  private final MeterRegistry registry;
  private final MultiGauge events;
  private final MultiGauge oldestAge;
  private final MultiGauge paused;
  private final MultiGauge tenantQueued;
  private final MultiGauge tenantInFlight;
  private final MultiGauge tenantWaitMax;
  private final MultiGauge tenantRateLimited;

  /** Per listed tenant, its counters: dispatched, and wait added up. */
  private final Map<TenantKey, List<FunctionCounter>> tenantCounters = new HashMap<>();

  private volatile Map<Key, Sample> samples = Map.of();
  private volatile Map<Key, QueueManager> served = Map.of();
  private volatile Map<TenantKey, TenantStats> tenants = Map.of();
  private volatile Map<String, Groups> groups = Map.of();

  private final java.time.Clock clock;
  private final long everyMs;

  /** Per queue, when its rows may be counted again (the telemetry thread only). */
  private final Map<Key, Long> nextCountAtMs = new HashMap<>();

  public StateSampler(
      QueueEngine engine, MeterRegistry registry, Duration every, java.time.Clock clock) {
    this.clock = clock;
    this.everyMs = every.toMillis();
    this.engine = engine;
    this.registry = registry;
    events =
        MultiGauge.builder("sluice.queue.events")
            .description("rows of the queue table by state (sampled)")
            .register(registry);
    oldestAge =
        MultiGauge.builder("sluice.queue.oldest.due.age")
            .baseUnit("seconds")
            .description("how long the oldest due pending event has waited (sampled)")
            .register(registry);
    paused =
        MultiGauge.builder("sluice.queue.paused")
            .description("1 while an operator has paused the queue")
            .register(registry);
    tenantQueued =
        MultiGauge.builder("sluice.tenant.queued.events")
            .description("a tenant's events held in the window (busiest tenants only)")
            .register(registry);
    tenantInFlight =
        MultiGauge.builder("sluice.tenant.in.flight.events")
            .description("a tenant's events fired and not settled (busiest tenants only)")
            .register(registry);
    tenantWaitMax =
        MultiGauge.builder("sluice.tenant.wait.seconds.max")
            .description(
                "the longest due->fired wait of a tenant's events in the last 10-20 s"
                    + " (busiest tenants only)")
            .register(registry);
    tenantRateLimited =
        MultiGauge.builder("sluice.tenant.rate.limited")
            .description(
                "1 while a tenant is passed over for its rate (tenant_max_rate, max_rate);"
                    + " busiest tenants only")
            .register(registry);
  }

  /** The last sample of each shard's open event groups, by shard; only shards that have some. */
  public Map<String, Groups> groups() {
    return groups;
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
        long nowMs = clock.millis();
        Sample old = before.get(e.getKey());
        StateCounts c;
        long countedAt;
        java.util.OptionalLong oldest;
        if (old == null || nowMs >= nextCountAtMs.getOrDefault(e.getKey(), 0L)) {
          // A count reads the oldest due pending event too: no second query for it.
          c = q.counts();
          oldest =
              c.pending() > 0
                  ? java.util.OptionalLong.of(c.oldestDueNs())
                  : java.util.OptionalLong.empty();
          countedAt = nowMs;
          nextCountAtMs.put(e.getKey(), nextCountAtMs(nowMs, everyMs, c));
        } else {
          oldest = q.oldestPendingDueNs();
          c = old.counts();
          countedAt = old.countedAtMs();
        }
        long nowNs = q.nowNs();
        long age =
            oldest.isEmpty() || oldest.getAsLong() > nowNs
                ? 0
                : (nowNs - oldest.getAsLong()) / 1_000_000;
        next.put(e.getKey(), new Sample(c, age, nowMs, countedAt));
      } catch (RuntimeException ex) {
        registry.counter("sluice.db.errors", e.getKey().tags()).increment();
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
    nextCountAtMs.keySet().retainAll(now.keySet());
    groups = sampleGroups(groups);
    served = Map.copyOf(now);
    samples = next;
    tenants = nextTenants;
    publish(next.keySet(), nextTenants.keySet());
  }

  /** Each shard's open groups; a shard whose read fails keeps its last sample. */
  private Map<String, Groups> sampleGroups(Map<String, Groups> before) {
    Map<String, Groups> next = new LinkedHashMap<>();
    for (ShardManager shard : engine.shards()) {
      try {
        Groups g = openGroups(shard.dataSource());
        if (g != null) {
          next.put(shard.name(), g);
        }
      } catch (RuntimeException e) {
        registry.counter("sluice.db.errors", "shard", shard.name()).increment();
        log.debug("metrics: reading shard {}'s open groups failed: {}", shard.name(), e.toString());
        Groups old = before.get(shard.name());
        if (old != null) {
          next.put(shard.name(), old);
        }
      }
    }
    return Map.copyOf(next);
  }

  /** The shard's open groups, or null when it has none (or no groups table yet). */
  static Groups openGroups(DataSource ds) {
    GroupStore.OpenGroups found = Stores.over(ds).groups().openGroups(OLDEST_GROUPS);
    List<OpenGroup> oldest = new ArrayList<>();
    for (GroupStore.OpenGroup g : found.oldest()) {
      oldest.add(new OpenGroup(g.key(), g.completionQueue(), g.completionId(), g.ageMs()));
    }
    return oldest.isEmpty() ? null : new Groups(found.open(), List.copyOf(oldest));
  }

  private void publish(Set<Key> queues, Set<TenantKey> tenantKeys) {
    List<MultiGauge.Row<?>> ev = new ArrayList<>();
    List<MultiGauge.Row<?>> age = new ArrayList<>();
    List<MultiGauge.Row<?>> pz = new ArrayList<>();
    for (Key k : queues) {
      for (String state : List.of("pending", "fired", "acked", "dead", "cancelled", "other")) {
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
    List<MultiGauge.Row<?>> tw = new ArrayList<>();
    List<MultiGauge.Row<?>> tr = new ArrayList<>();
    for (TenantKey tk : tenantKeys) {
      Tags tags = tk.queue().tags().and("tenant", tk.tenant());
      tq.add(MultiGauge.Row.of(tags, () -> tenantValue(tk, TenantStats::queued)));
      tf.add(MultiGauge.Row.of(tags, () -> tenantValue(tk, TenantStats::inFlight)));
      tw.add(MultiGauge.Row.of(tags, () -> tenantValue(tk, TenantStats::recentMaxWaitNs) / 1e9));
      tr.add(MultiGauge.Row.of(tags, () -> tenantValue(tk, t -> t.rateLimited() ? 1 : 0)));
      tenantCounters.computeIfAbsent(
          tk,
          k ->
              List.of(
                  FunctionCounter.builder(
                          "sluice.tenant.events.dispatched",
                          this,
                          s -> s.tenantValue(k, TenantStats::dispatched))
                      .description("a tenant's events fired since the queue started (busiest only)")
                      .tags(tags)
                      .register(registry),
                  FunctionCounter.builder(
                          "sluice.tenant.wait",
                          this,
                          s -> s.tenantValue(k, TenantStats::waitNsTotal) / 1e9)
                      .baseUnit("seconds")
                      .description(
                          "how long a tenant's fired events waited after they came due, added up"
                              + " (busiest only; over sluice_tenant_events_dispatched_total, the"
                              + " mean wait)")
                      .tags(tags)
                      .register(registry)));
    }
    tenantQueued.register(tq, false);
    tenantInFlight.register(tf, false);
    tenantWaitMax.register(tw, false);
    tenantRateLimited.register(tr, false);
    Set<TenantKey> gone = new HashSet<>(tenantCounters.keySet());
    gone.removeAll(tenantKeys);
    for (TenantKey k : gone) {
      tenantCounters.remove(k).forEach(registry::remove);
    }
  }

  /**
   * Removes every meter this sampler registered (call on the telemetry thread's stop), so that a
   * manager restarted on the same registry does not report through a stopped one.
   */
  void removeMeters() {
    for (MultiGauge g :
        List.of(
            events,
            oldestAge,
            paused,
            tenantQueued,
            tenantInFlight,
            tenantWaitMax,
            tenantRateLimited)) {
      g.register(List.of(), true);
    }
    tenantCounters.values().forEach(cs -> cs.forEach(registry::remove));
    tenantCounters.clear();
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
      case "other" -> c.other();
      default -> c.cancelled();
    };
  }

  private double tenantValue(TenantKey k, java.util.function.ToLongFunction<TenantStats> f) {
    TenantStats t = tenants.get(k);
    return t == null ? 0 : f.applyAsLong(t);
  }
}
