package dev.sluice.receiver;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

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
 */
public final class MicrometerReceiverMetrics implements ReceiverObserver {
  private final MeterRegistry registry;
  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

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
}
