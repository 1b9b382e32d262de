package dev.sluice.receiver;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The receiver's Micrometer meters, per queue. Needs {@code io.micrometer:micrometer-core} on the
 * class path (an optional dependency of the SDK). Add it with {@code
 * SluiceReceiver.builder().observer(new MicrometerReceiverMetrics(registry))}.
 *
 * <table>
 *   <caption>Meters (Prometheus names in parentheses)</caption>
 *   <tr><td>{@code sluice.receiver.handling} timer, tags queue, outcome (acked, retry_later,
 *       failed)</td><td>({@code sluice_receiver_handling_seconds})</td></tr>
 *   <tr><td>{@code sluice.receiver.in.flight} gauge, tag queue: events being handled</td>
 *       <td>({@code sluice_receiver_in_flight})</td></tr>
 *   <tr><td>{@code sluice.receiver.completions} counter, tags queue, result (ack, nack)</td>
 *       <td>({@code sluice_receiver_completions_total})</td></tr>
 * </table>
 *
 * <p>With {@link #receiverStats}, also the receiver's own counters, per queue: {@code
 * sluice.receiver.streams.connected} (gauge: manager streams subscribed now), {@code
 * sluice.receiver.acks}, {@code sluice.receiver.nacks}, {@code sluice.receiver.acks.stale} (acks
 * the manager found out of date) and {@code sluice.receiver.reconnects} (counters).
 */
public final class MicrometerReceiverMetrics implements ReceiverObserver {
  private final MeterRegistry registry;
  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

  /**
   * Queues whose {@link #receiverStats} meters exist, with their sources: Micrometer holds gauge
   * and counter sources weakly, this keeps them alive.
   */
  private final Map<String, Supplier<ReceiverStats>> sources = new ConcurrentHashMap<>();

  public MicrometerReceiverMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public Handling handlingStarted(ReceivedEvent event) {
    String queue = event.queue();
    AtomicInteger running =
        inFlight.computeIfAbsent(
            queue,
            q -> {
              AtomicInteger n = new AtomicInteger();
              Gauge.builder("sluice.receiver.in.flight", n, AtomicInteger::get)
                  .description("Events this receiver's handlers are running now")
                  .tag("queue", q)
                  .register(registry);
              return n;
            });
    running.incrementAndGet();
    Timer.Sample sample = Timer.start(registry);
    return (outcome, error) -> {
      running.decrementAndGet();
      sample.stop(
          Timer.builder("sluice.receiver.handling")
              .description("Time the handler took, by outcome")
              // Buckets behind the dashboard's p99 panel (histogram_quantile over _bucket).
              .publishPercentileHistogram()
              .minimumExpectedValue(Duration.ofMillis(1))
              .maximumExpectedValue(Duration.ofMinutes(5))
              .tag("queue", queue)
              .tag("outcome", outcome.tag())
              .register(registry));
      Counter.builder("sluice.receiver.completions")
          .description("Acks and nacks this receiver sent")
          .tag("queue", queue)
          .tag("result", outcome == Outcome.ACKED ? "ack" : "nack")
          .register(registry)
          .increment();
    };
  }

  /**
   * Adds the meters read from the receiver of {@code queue}'s counters (see above); {@code stats}
   * reads its current receiver's, or null while none runs (the meters then read NaN, which
   * Micrometer skips). Once per queue: a later call for the same queue is ignored, so a restarted
   * receiver keeps its meters when {@code stats} reads the current one.
   */
  public void receiverStats(String queue, Supplier<ReceiverStats> stats) {
    if (sources.putIfAbsent(queue, stats) != null) {
      return;
    }
    Gauge.builder(
            "sluice.receiver.streams.connected",
            stats,
            s -> value(s, ReceiverStats::streamsConnected))
        .description("manager streams subscribed now")
        .tag("queue", queue)
        .register(registry);
    counter(
        "sluice.receiver.acks",
        queue,
        stats,
        ReceiverStats::acked,
        "handlings that ended in an ack");
    counter(
        "sluice.receiver.nacks",
        queue,
        stats,
        ReceiverStats::nacked,
        "handlings that ended in a nack");
    counter(
        "sluice.receiver.acks.stale",
        queue,
        stats,
        ReceiverStats::ackStale,
        "acks the manager found out of date");
    counter(
        "sluice.receiver.reconnects", queue, stats, ReceiverStats::reconnects, "streams reopened");
  }

  private void counter(
      String name,
      String queue,
      Supplier<ReceiverStats> stats,
      ToDoubleFunction<ReceiverStats> f,
      String description) {
    FunctionCounter.builder(name, stats, s -> value(s, f))
        .description(description)
        .tag("queue", queue)
        .register(registry);
  }

  /** The figure, or NaN while no receiver runs (Micrometer skips NaN). */
  private static double value(Supplier<ReceiverStats> stats, ToDoubleFunction<ReceiverStats> f) {
    ReceiverStats s = stats.get();
    return s == null ? Double.NaN : f.applyAsDouble(s);
  }
}
