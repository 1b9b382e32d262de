package dev.sluice.spring;

import dev.sluice.receiver.ReceiverStats;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;

/**
 * {@code sluice} in Actuator's health: UP when every running listener has a subscribed stream to at
 * least one manager; {@code sluice.health.disconnected-status} (UNKNOWN by default, so neither
 * {@code /actuator/health} nor readiness turn 503) while one has none (managers unreachable, or the
 * queue unknown to them); UNKNOWN while the listeners are stopped with the context. Paused and
 * stopped listeners are shown, not counted. Details per listener id: queue, state, streams
 * connected of targets, in flight, received, acked, nacked.
 *
 * <p>It belongs in the readiness group (the starter adds it there when Spring Boot's probes are on)
 * and never in liveness: a manager outage is no reason to restart the application.
 */
public class SluiceHealthIndicator extends AbstractHealthIndicator {
  private final SluiceListenerContainer container;
  private final Status disconnected;

  public SluiceHealthIndicator(SluiceListenerContainer container) {
    this(container, Status.UNKNOWN);
  }

  /**
   * @param disconnected the status while a running listener has no stream
   */
  public SluiceHealthIndicator(SluiceListenerContainer container, Status disconnected) {
    super("Sluice health check failed");
    this.container = container;
    this.disconnected = disconnected;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    if (!container.isRunning()) {
      builder.unknown().withDetail("listeners", "stopped");
      return;
    }
    boolean connected = true;
    Map<String, ReceiverStats> stats = container.stats();
    Map<String, Object> listeners = new LinkedHashMap<>();
    for (String id : new TreeSet<>(container.listenerIds())) {
      SluiceListenerRegistry.State state = container.state(id);
      Map<String, Object> d = new LinkedHashMap<>();
      d.put("queue", container.queue(id));
      d.put("state", state.name());
      ReceiverStats s = stats.get(id);
      if (s != null) {
        connected &= s.streamsConnected() > 0;
        d.put("streams", s.streamsConnected() + "/" + container.targets());
        d.put("inFlight", s.inFlight());
        d.put("received", s.received());
        d.put("acked", s.acked());
        d.put("nacked", s.nacked());
      }
      listeners.put(id, d);
    }
    builder.status(connected ? Status.UP : disconnected).withDetail("listeners", listeners);
    if (!connected) {
      builder.withDetail("reason", "a running listener has no stream to any manager");
    }
  }
}
