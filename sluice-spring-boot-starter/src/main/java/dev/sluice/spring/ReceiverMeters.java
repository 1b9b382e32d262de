package dev.sluice.spring;

import dev.sluice.receiver.MicrometerReceiverMetrics;
import dev.sluice.receiver.ReceiverStats;
import dev.sluice.receiver.SluiceReceiverBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The listeners' meters, in the application's {@link MeterRegistry}: the receiver SDK's {@link
 * MicrometerReceiverMetrics} owns them (Prometheus shows the dots as underscores, e.g. {@code
 * sluice_receiver_handling_seconds}):
 *
 * <ul>
 *   <li>{@code sluice.receiver.handling} (timer; queue, outcome = acked, retry_later or failed)
 *   <li>{@code sluice.receiver.in.flight} (gauge; queue): handlers running now
 *   <li>{@code sluice.receiver.completions} (counter; queue, result = ack or nack)
 *   <li>{@code sluice.receiver.acks}, {@code sluice.receiver.nacks} (counters; queue)
 *   <li>{@code sluice.receiver.acks.stale} (counter; queue): acks the manager found out of date
 *   <li>{@code sluice.receiver.reconnects} (counter; queue)
 *   <li>{@code sluice.receiver.streams.connected} (gauge; queue)
 * </ul>
 *
 * The registry is looked up when the first listener starts, after every bean exists. One {@link
 * MicrometerReceiverMetrics} serves every listener and restart: its gauges and counters read the
 * listener's current receiver, so a restart keeps them.
 *
 * <p>Threads: called on Spring's lifecycle thread (the container's start); {@link #metrics} is
 * synchronized all the same.
 */
final class ReceiverMeters implements ListenerObserver {
  private final ObjectProvider<MeterRegistry> registries;
  private MicrometerReceiverMetrics metrics; // guarded by this

  ReceiverMeters(ObjectProvider<MeterRegistry> registries) {
    this.registries = registries;
  }

  @Override
  public void building(String queue, SluiceReceiverBuilder receiver) {
    MicrometerReceiverMetrics m = metrics();
    if (m != null) {
      receiver.observer(m);
    }
  }

  @Override
  public void started(String queue, Supplier<ReceiverStats> stats) {
    MicrometerReceiverMetrics m = metrics();
    if (m != null) {
      m.receiverStats(queue, stats);
    }
  }

  /** The meters, or null when the application has no registry. */
  private synchronized MicrometerReceiverMetrics metrics() {
    if (metrics == null) {
      MeterRegistry r = registries.getIfAvailable();
      if (r != null) {
        metrics = new MicrometerReceiverMetrics(r);
      }
    }
    return metrics;
  }
}
