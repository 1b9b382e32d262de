package dev.sluice.manager.metrics;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.queue.QueueManager;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The status page's charts: every second, per served queue, the dispatch rate and the due→dispatch
 * latency of that second, from the queue's own meters (no database query). Keeps the last {@link
 * #POINTS} points, so a page opened now shows the last two minutes at once.
 *
 * <p>The latency's p99 comes from the timer's cumulative histogram buckets (a Prometheus registry
 * keeps them); with a registry that keeps none it is NaN and only the mean is drawn.
 *
 * <p>Threads: {@link #run()} runs on the telemetry thread only and owns the rings; {@link
 * #series()} hands HTTP threads an immutable copy published through a volatile field.
 */
public final class LiveSeries implements Runnable {
  public static final int POINTS = 120;

  /**
   * One second of one queue.
   *
   * @param timeMs the end of the second, ms since the epoch
   * @param dispatchedPerSecond events fired in that second
   * @param latencyMeanMs mean due→dispatch latency of those events, NaN when none fired
   * @param latencyP99Ms the upper bound of the histogram bucket holding the 99th percentile, NaN
   *     when unknown
   */
  public record Point(
      long timeMs, double dispatchedPerSecond, double latencyMeanMs, double latencyP99Ms) {}

  /** What the previous tick saw of one queue's meters. */
  private static final class Last {
    double dispatched;
    long latencyCount;
    double latencyTotalMs;
    double[] buckets;
    long atNanos;
    final Deque<Point> points = new ArrayDeque<>();
  }

  private final QueueEngine engine;
  private final Map<StateSampler.Key, Last> last = new HashMap<>();
  private volatile Map<StateSampler.Key, List<Point>> published = Map.of();

  private final java.time.Clock clock;

  public LiveSeries(QueueEngine engine, java.time.Clock clock) {
    this.clock = clock;
    this.engine = engine;
  }

  /** Each served queue's last points, oldest first. */
  public Map<StateSampler.Key, List<Point>> series() {
    return published;
  }

  @Override
  public void run() {
    long nowNanos = System.nanoTime();
    long nowMs = clock.millis();
    Map<StateSampler.Key, List<Point>> out = new LinkedHashMap<>();
    Map<StateSampler.Key, Last> seen = new HashMap<>();
    for (QueueManager q : engine.served()) {
      StateSampler.Key k = new StateSampler.Key(q.shard(), q.queue());
      double dispatched = q.metrics().dispatched().count();
      Timer t = q.metrics().dueToDispatch();
      HistogramSnapshot h = t.takeSnapshot();
      double[] buckets = new double[h.histogramCounts().length];
      for (int i = 0; i < buckets.length; i++) {
        buckets[i] = h.histogramCounts()[i].count();
      }
      Last l = last.get(k);
      if (l == null || dispatched < l.dispatched || h.count() < l.latencyCount) {
        l = new Last(); // new, or restarted (its meters start over): no point this tick
      } else {
        double secs = Math.max(1e-3, (nowNanos - l.atNanos) / 1e9);
        long n = h.count() - l.latencyCount;
        double mean = n == 0 ? Double.NaN : (h.total(TimeUnit.MILLISECONDS) - l.latencyTotalMs) / n;
        l.points.addLast(
            new Point(
                nowMs,
                (dispatched - l.dispatched) / secs,
                mean,
                p99(h.histogramCounts(), l.buckets, n)));
        while (l.points.size() > POINTS) {
          l.points.removeFirst();
        }
      }
      l.dispatched = dispatched;
      l.latencyCount = h.count();
      l.latencyTotalMs = h.total(TimeUnit.MILLISECONDS);
      l.buckets = buckets;
      l.atNanos = nowNanos;
      seen.put(k, l);
      out.put(k, List.copyOf(l.points));
    }
    last.clear();
    last.putAll(seen);
    published = out;
  }

  /** The 99th percentile of the events recorded since {@code before}, from cumulative buckets. */
  static double p99(CountAtBucket[] now, double[] before, long n) {
    if (n <= 0 || now.length == 0 || before == null || before.length != now.length) {
      return Double.NaN;
    }
    double target = Math.ceil(n * 0.99);
    for (int i = 0; i < now.length; i++) {
      if (now[i].count() - before[i] >= target) {
        return now[i].bucket(TimeUnit.MILLISECONDS);
      }
    }
    return Double.NaN; // above the largest bucket
  }
}
