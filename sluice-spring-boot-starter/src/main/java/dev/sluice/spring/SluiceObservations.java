package dev.sluice.spring;

import dev.sluice.receiver.ReceivedEvent;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;
import java.util.Map;

/**
 * Micrometer observations of the listeners' handlings and the producer's inserts, so Spring Boot's
 * tracing bridges (Micrometer Tracing with OpenTelemetry or Brave) make spans of them and its
 * observation handlers meters. Keys follow OpenTelemetry's messaging conventions:
 *
 * <ul>
 *   <li>low cardinality: {@code messaging.system}=sluice, {@code messaging.destination.name} (the
 *       queue), {@code messaging.operation} and {@code messaging.operation.type} (process or
 *       publish), {@code sluice.listener.id} for listeners;
 *   <li>high cardinality: {@code messaging.message.id} (the event id), {@code sluice.attempt},
 *       {@code sluice.shard} and {@code sluice.tenant} for listeners.
 * </ul>
 *
 * A listener's observation continues the producer's trace when the queue table has a {@code
 * traceparent} column (and, optionally, {@code tracestate}): the tracing bridge reads them as W3C
 * headers. The producer fills them through sluice-client when OpenTelemetry is on the class path.
 */
final class SluiceObservations {
  /** Observation of one handling by a listener. */
  static final String LISTENER = "sluice.listener";

  /** Observation of one insert by the producer. */
  static final String PRODUCER = "sluice.producer";

  private SluiceObservations() {}

  static Observation listener(ObservationRegistry registry, String listenerId, ReceivedEvent e) {
    ReceiverContext<ReceivedEvent> context =
        new ReceiverContext<>(
            (event, key) -> {
              Object v = event.columns().get(key);
              return v instanceof String s ? s : null;
            });
    context.setCarrier(e);
    context.setRemoteServiceName("sluice");
    return Observation.createNotStarted(LISTENER, () -> context, registry)
        .contextualName(e.queue() + " process")
        .lowCardinalityKeyValue(KeyValue.of("messaging.system", "sluice"))
        .lowCardinalityKeyValue(KeyValue.of("messaging.destination.name", e.queue()))
        .lowCardinalityKeyValue(KeyValue.of("messaging.operation", "process"))
        .lowCardinalityKeyValue(KeyValue.of("messaging.operation.type", "process"))
        .lowCardinalityKeyValue(KeyValue.of("sluice.listener.id", listenerId))
        .highCardinalityKeyValue(KeyValue.of("messaging.message.id", Long.toString(e.id())))
        .highCardinalityKeyValue(KeyValue.of("sluice.attempt", Long.toString(e.attempt())))
        .highCardinalityKeyValue(KeyValue.of("sluice.shard", e.shard()))
        .highCardinalityKeyValue(KeyValue.of("sluice.tenant", e.tenant()));
  }

  static Observation producer(ObservationRegistry registry, String queue) {
    // The trace context travels in the row (sluice-client's traceparent column), not through a
    // setter: the carrier is only for the tracing bridge's bookkeeping.
    SenderContext<Map<String, String>> context = new SenderContext<>((carrier, k, v) -> {});
    context.setCarrier(new java.util.HashMap<>());
    context.setRemoteServiceName("sluice");
    return Observation.createNotStarted(PRODUCER, () -> context, registry)
        .contextualName(queue + " publish")
        .lowCardinalityKeyValue(KeyValue.of("messaging.system", "sluice"))
        .lowCardinalityKeyValue(KeyValue.of("messaging.destination.name", queue))
        .lowCardinalityKeyValue(KeyValue.of("messaging.operation", "publish"))
        .lowCardinalityKeyValue(KeyValue.of("messaging.operation.type", "send"));
  }
}
