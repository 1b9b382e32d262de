package dev.sluice.spring;

import dev.sluice.receiver.ReceiverStats;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * {@code sluice} in Actuator's health: UP when every listener has a subscribed stream to at least
 * one manager, DOWN when one has none (managers unreachable, or the queue unknown to them),
 * OUT_OF_SERVICE while the listeners are stopped. Details per queue: streams connected of targets,
 * in flight, received, acked, nacked.
 */
public class SluiceHealthIndicator extends AbstractHealthIndicator {
  private final SluiceListenerContainer container;

  public SluiceHealthIndicator(SluiceListenerContainer container) {
    super("Sluice health check failed");
    this.container = container;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    if (!container.isRunning()) {
      builder.outOfService().withDetail("listeners", "stopped");
      return;
    }
    boolean up = true;
    Map<String, Object> queues = new LinkedHashMap<>();
    for (Map.Entry<String, ReceiverStats> e : container.stats().entrySet()) {
      ReceiverStats s = e.getValue();
      up &= s.streamsConnected() > 0;
      Map<String, Object> d = new LinkedHashMap<>();
      d.put("streams", s.streamsConnected() + "/" + container.targets());
      d.put("inFlight", s.inFlight());
      d.put("received", s.received());
      d.put("acked", s.acked());
      d.put("nacked", s.nacked());
      queues.put(e.getKey(), d);
    }
    (up ? builder.up() : builder.down()).withDetail("queues", queues);
  }
}
