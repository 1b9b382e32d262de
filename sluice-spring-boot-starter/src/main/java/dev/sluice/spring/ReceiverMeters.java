package dev.sluice.spring;

import dev.sluice.receiver.ReceiverStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The listeners' meters, in the application's {@link MeterRegistry} (Prometheus shows the dots as
 * underscores, e.g. {@code sluice_receiver_handling_seconds}):
 *
 * <ul>
 *   <li>{@code sluice.receiver.handling} (timer; queue, outcome = ack, nack or retry_later)
 *   <li>{@code sluice.receiver.in.flight} (gauge; queue): received, handling not finished
 *   <li>{@code sluice.receiver.acks}, {@code sluice.receiver.nacks} (counters; queue)
 *   <li>{@code sluice.receiver.acks.stale} (counter; queue): acks the manager found out of date
 *   <li>{@code sluice.receiver.reconnects} (counter; queue)
 *   <li>{@code sluice.receiver.streams.connected} (gauge; queue)
 * </ul>
 *
 * The registry is looked up when a listener starts, after every bean exists. The gauges and
 * counters read the listener's current receiver, so a restart keeps them.
 */
final class ReceiverMeters implements ListenerObserver {
  private final ObjectProvider<MeterRegistry> registries;

  /**
   * Queues whose meters exist, with their sources: Micrometer holds gauge and counter sources
   * weakly, this keeps them alive; and a listener restarted keeps its meters (they read the current
   * receiver).
   */
  private final Map<String, Supplier<ReceiverStats>> sources = new ConcurrentHashMap<>();

  ReceiverMeters(ObjectProvider<MeterRegistry> registries) {
    this.registries = registries;
  }

  @Override
  public void started(String queue, Supplier<ReceiverStats> stats) {
    MeterRegistry r = registries.getIfAvailable();
    if (r == null) {
      return;
    }
    if (sources.putIfAbsent(queue, stats) != null) {
      return;
    }
    gauge(
        r,
        "sluice.receiver.in.flight",
        queue,
        stats,
        s -> s.inFlight(),
        "events received whose handling has not finished");
    gauge(
        r,
        "sluice.receiver.streams.connected",
        queue,
        stats,
        s -> s.streamsConnected(),
        "manager streams subscribed now");
    counter(
        r, "sluice.receiver.acks", queue, stats, s -> s.acked(), "handlings that ended in an ack");
    counter(
        r,
        "sluice.receiver.nacks",
        queue,
        stats,
        s -> s.nacked(),
        "handlings that ended in a nack");
    counter(
        r,
        "sluice.receiver.acks.stale",
        queue,
        stats,
        s -> s.ackStale(),
        "acks the manager found out of date");
    counter(r, "sluice.receiver.reconnects", queue, stats, s -> s.reconnects(), "streams reopened");
  }

  @Override
  public void handled(String queue, long nanos, String outcome) {
    MeterRegistry r = registries.getIfAvailable();
    if (r == null) {
      return;
    }
    Timer.builder("sluice.receiver.handling")
        .description("time in the @SluiceListener method, by outcome")
        .tag("queue", queue)
        .tag("outcome", outcome)
        .register(r)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** The figure, or NaN while the listener is stopped (Micrometer skips NaN). */
  private static double value(Supplier<ReceiverStats> stats, ToDoubleFunction<ReceiverStats> f) {
    ReceiverStats s = stats.get();
    return s == null ? Double.NaN : f.applyAsDouble(s);
  }

  private static void gauge(
      MeterRegistry r,
      String name,
      String queue,
      Supplier<ReceiverStats> stats,
      ToDoubleFunction<ReceiverStats> f,
      String description) {
    Gauge.builder(name, stats, s -> value(s, f))
        .description(description)
        .tag("queue", queue)
        .register(r);
  }

  private static void counter(
      MeterRegistry r,
      String name,
      String queue,
      Supplier<ReceiverStats> stats,
      ToDoubleFunction<ReceiverStats> f,
      String description) {
    FunctionCounter.builder(name, stats, s -> value(s, f))
        .description(description)
        .tag("queue", queue)
        .register(r);
  }
}
