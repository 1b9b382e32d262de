package dev.sluice.manager.http;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.fairness.TenantStats;
import dev.sluice.core.queue.QueueManager;
import dev.sluice.core.queue.dispatch.ReceiverStats;
import dev.sluice.core.shard.ShardManager;
import dev.sluice.db.store.StateCounts;
import dev.sluice.manager.metrics.LiveSeries;
import dev.sluice.manager.metrics.StateSampler;
import dev.sluice.manager.metrics.Telemetry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code /api/status} answers and the status page draws: shards (with their open event groups,
 * when they have some), queues with rows by state (from the last sample, never a query per
 * request), receivers, the busiest tenants and each queue's last two minutes of dispatch rate and
 * latency.
 */
public final class StatusReport {
  /** Tenants listed on the page, busiest first across all queues. */
  static final int TOP_TENANTS = 20;

  private final Map<String, Object> root = new LinkedHashMap<>();

  private StatusReport() {}

  /** A report of this moment. Safe from any thread. */
  public static StatusReport of(
      String managerId,
      boolean ready,
      String state,
      QueueEngine engine,
      Telemetry telemetry,
      java.time.Clock clock) {
    StatusReport r = new StatusReport();
    r.root.put("manager", managerId);
    r.root.put("ready", ready);
    r.root.put("state", state);
    r.root.put("time_ms", clock.millis());
    r.root.put("sample_every_ms", StateSampler.DEFAULT_EVERY.toMillis());

    List<Object> shards = new ArrayList<>();
    List<Object> disabled = new ArrayList<>();
    Map<String, StateSampler.Groups> groups = telemetry.sampler().groups();
    for (ShardManager s : engine.shards()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", s.name());
      m.put("lease_held", s.leading());
      m.put("queues", s.queues().size());
      m.put("disabled", s.disabled().size());
      Map<String, Object> binlog = new LinkedHashMap<>();
      binlog.put("mode", s.binlog().mode().configName());
      binlog.put("following", s.binlog().following());
      binlog.put("detail", s.binlog().detail());
      m.put("binlog", binlog);
      StateSampler.Groups g = groups.get(s.name());
      if (g != null) {
        Map<String, Object> gm = new LinkedHashMap<>();
        gm.put("open", g.open());
        List<Object> oldest = new ArrayList<>();
        for (StateSampler.OpenGroup o : g.oldest()) {
          Map<String, Object> om = new LinkedHashMap<>();
          om.put("key", o.key());
          om.put("completion_queue", o.completionQueue());
          om.put("completion_id", o.completionId());
          om.put("age_ms", o.ageMs());
          oldest.add(om);
        }
        gm.put("oldest", oldest);
        m.put("groups", gm);
      }
      shards.add(m);
      s.disabled()
          .forEach(
              (q, problem) -> {
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("shard", s.name());
                d.put("queue", q);
                d.put("problem", problem);
                disabled.add(d);
              });
    }
    r.root.put("shards", shards);

    Map<StateSampler.Key, StateSampler.Sample> samples = telemetry.sampler().samples();
    Map<StateSampler.Key, List<LiveSeries.Point>> series = telemetry.series().series();
    List<Object> queues = new ArrayList<>();
    List<Object> receivers = new ArrayList<>();
    List<Map<String, Object>> tenants = new ArrayList<>();
    Map<String, Object> charts = new LinkedHashMap<>();
    for (QueueManager q : engine.served()) {
      StateSampler.Key k = new StateSampler.Key(q.shard(), q.queue());
      String key = q.shard() + "/" + q.queue();
      QueueManager.LiveStats live = q.live();
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("key", key);
      m.put("shard", q.shard());
      m.put("queue", q.queue());
      m.put("paused", q.paused());
      StateSampler.Sample s = samples.get(k);
      m.put("sampled", s != null);
      StateCounts c = s == null ? new StateCounts(0, 0, 0, 0, 0, 0) : s.counts();
      m.put("pending", c.pending());
      m.put("fired", c.fired());
      m.put("acked", c.acked());
      m.put("dead", c.dead());
      m.put("cancelled", c.cancelled());
      m.put("other", c.other());
      m.put("oldest_due_age_ms", s == null ? 0 : s.oldestDueAgeMs());
      m.put("sampled_at_ms", s == null ? 0 : s.sampledAtMs());
      m.put("counted_at_ms", s == null ? 0 : s.countedAtMs());
      m.put("window", live.cached());
      m.put("in_flight", live.inFlight());
      m.put("receivers", live.receivers());
      m.put("dispatched_total", q.metrics().dispatched().count());
      queues.add(m);

      for (ReceiverStats rs : q.receivers()) {
        Map<String, Object> rm = new LinkedHashMap<>();
        rm.put("shard", q.shard());
        rm.put("queue", q.queue());
        rm.put("receiver_id", rs.receiverId());
        rm.put("stream", rs.streamId());
        rm.put("in_flight", rs.inFlight());
        rm.put("max_in_flight", rs.maxInFlight());
        rm.put("draining", rs.draining());
        receivers.add(rm);
      }
      for (TenantStats t : q.tenants()) {
        Map<String, Object> tm = new LinkedHashMap<>();
        tm.put("shard", q.shard());
        tm.put("queue", q.queue());
        tm.put("tenant", t.tenant());
        tm.put("queued", t.queued());
        tm.put("in_flight", t.inFlight());
        tm.put("dispatched", t.dispatched());
        tm.put("mean_wait_ms", t.dispatched() == 0 ? 0.0 : t.waitNsTotal() / 1e6 / t.dispatched());
        tm.put("max_wait_ms", t.recentMaxWaitNs() / 1e6);
        tm.put("rate_limited", t.rateLimited());
        tenants.add(tm);
      }
      List<Object> points = new ArrayList<>();
      for (LiveSeries.Point p : series.getOrDefault(k, List.of())) {
        points.add(
            List.of(p.timeMs(), p.dispatchedPerSecond(), p.latencyMeanMs(), p.latencyP99Ms()));
      }
      charts.put(key, points);
    }
    tenants.sort(
        Comparator.comparingLong(
                (Map<String, Object> t) -> (long) t.get("queued") + (long) t.get("in_flight"))
            .thenComparingLong(t -> (long) t.get("dispatched"))
            .reversed());
    r.root.put("queues", queues);
    r.root.put("disabled", disabled);
    r.root.put("receivers", receivers);
    r.root.put("tenants", tenants.subList(0, Math.min(TOP_TENANTS, tenants.size())));
    r.root.put("series_columns", List.of("time_ms", "dispatched_per_s", "mean_ms", "p99_ms"));
    r.root.put("series", charts);
    return r;
  }

  /** The report as nested maps and lists, for {@link dev.sluice.manager.json.Json}. */
  /** Adds the configuration's warnings (e.g. an insecure exposure), shown atop the page. */
  public StatusReport withWarnings(List<String> warnings) {
    root.put("warnings", warnings);
    return this;
  }

  /** Adds the channels' figures per queue and shard (see {@code ChannelOutlets#status}). */
  public StatusReport withChannels(List<Map<String, Object>> channels) {
    root.put("channels", channels);
    return this;
  }

  public Map<String, Object> toMap() {
    return root;
  }
}
