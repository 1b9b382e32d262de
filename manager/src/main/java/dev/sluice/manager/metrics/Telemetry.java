package dev.sluice.manager.metrics;

import dev.sluice.core.QueueEngine;
import dev.sluice.core.shard.ShardManager;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manager's observability beyond each queue's own meters: the {@link StateSampler} (every 5 s),
 * the {@link LiveSeries} for the status page (every second) and a gauge per shard, {@code
 * sluice_shard_lease_held}, read from {@link ShardManager#leading()}.
 *
 * <p>Threads: one daemon thread, {@code sluice-telemetry}, runs both tasks, so they never run at
 * once. {@link #start()} and {@link #stop()} are idempotent.
 */
public final class Telemetry {
  private static final Logger log = LoggerFactory.getLogger(Telemetry.class);

  private final StateSampler sampler;
  private final LiveSeries series;
  private final Duration sampleEvery;
  private final MeterRegistry registry;
  private final List<Meter> gauges = new ArrayList<>();
  private ScheduledExecutorService thread;
  private boolean stopped;

  public Telemetry(
      QueueEngine engine, MeterRegistry registry, Duration sampleEvery, java.time.Clock clock) {
    this.sampler = new StateSampler(engine, registry, sampleEvery, clock);
    this.series = new LiveSeries(engine, clock);
    this.sampleEvery = sampleEvery;
    this.registry = registry;
    for (ShardManager s : engine.shards()) {
      gauges.add(
          Gauge.builder("sluice.shard.lease.held", s, x -> x.leading() ? 1 : 0)
              .description("1 while this manager holds the shard's lease and may dispatch")
              .tag("shard", s.name())
              .strongReference(true)
              .register(registry));
    }
  }

  public Telemetry(QueueEngine engine, MeterRegistry registry, java.time.Clock clock) {
    this(engine, registry, StateSampler.DEFAULT_EVERY, clock);
  }

  public StateSampler sampler() {
    return sampler;
  }

  public LiveSeries series() {
    return series;
  }

  public synchronized void start() {
    if (thread != null || stopped) {
      return;
    }
    thread =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "sluice-telemetry");
              t.setDaemon(true);
              return t;
            });
    thread.scheduleWithFixedDelay(sampler, 0, sampleEvery.toMillis(), TimeUnit.MILLISECONDS);
    thread.scheduleAtFixedRate(guard(series), 1_000, 1_000, TimeUnit.MILLISECONDS);
  }

  /** A periodic task that survives its own failures (a thrown exception would cancel it). */
  private static Runnable guard(Runnable r) {
    return () -> {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.warn("telemetry task failed, continuing: {}", e.toString(), e);
      }
    };
  }

  /** Stops the thread (bounded), then removes this telemetry's meters. */
  public synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    if (thread != null) {
      thread.shutdownNow();
      try {
        if (!thread.awaitTermination(2, TimeUnit.SECONDS)) {
          log.warn("telemetry thread did not stop in 2 s");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    sampler.removeMeters();
    gauges.forEach(registry::remove);
  }
}
