package dev.sluice.receiver;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.List;

/**
 * Continues the producer's trace in the handler: a CONSUMER span named {@code process <queue>}
 * around each handling, whose parent (and link) is the context the producer stored in the event's
 * {@code traceparent} column (and {@code tracestate}, if the table has it), per OpenTelemetry's
 * messaging semantic conventions. The span is current while the handler runs, so the handler's own
 * spans are its children. Needs {@code io.opentelemetry:opentelemetry-api} on the class path (an
 * optional dependency of the SDK); add it with {@code SluiceReceiver.builder().observer(new
 * OpenTelemetryTracing(openTelemetry))}.
 *
 * <p>Attributes: {@code messaging.system=sluice}, {@code messaging.operation.name=process}, {@code
 * messaging.operation.type=process}, {@code messaging.destination.name} (the queue), {@code
 * messaging.destination.partition.id} (the shard), {@code messaging.message.id} (the event id),
 * {@code messaging.sluice.attempt} (the epoch). A handler that throws marks the span ERROR with
 * {@code error.type}; {@link RetryLater} does not (a deliberate retry).
 */
public final class OpenTelemetryTracing implements ReceiverObserver {
  public static final String TRACEPARENT = "traceparent";
  public static final String TRACESTATE = "tracestate";

  private static final TextMapGetter<ReceivedEvent> COLUMNS =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(ReceivedEvent carrier) {
          return List.of(TRACEPARENT, TRACESTATE);
        }

        @Override
        public String get(ReceivedEvent carrier, String key) {
          return carrier == null || !(carrier.columns().get(key) instanceof String s) ? null : s;
        }
      };

  private final Tracer tracer;

  public OpenTelemetryTracing(OpenTelemetry openTelemetry) {
    this.tracer = openTelemetry.getTracer("dev.sluice.receiver");
  }

  @Override
  public Handling handlingStarted(ReceivedEvent event) {
    Context parent =
        W3CTraceContextPropagator.getInstance().extract(Context.root(), event, COLUMNS);
    SpanContext producer = Span.fromContext(parent).getSpanContext();
    SpanBuilder b =
        tracer
            .spanBuilder("process " + event.queue())
            .setSpanKind(SpanKind.CONSUMER)
            .setParent(parent)
            .setAttribute("messaging.system", "sluice")
            .setAttribute("messaging.operation.name", "process")
            .setAttribute("messaging.operation.type", "process")
            .setAttribute("messaging.destination.name", event.queue())
            .setAttribute("messaging.destination.partition.id", event.shard())
            .setAttribute("messaging.message.id", Long.toString(event.id()))
            .setAttribute("messaging.sluice.attempt", event.epoch());
    if (producer.isValid()) {
      b.addLink(producer);
    }
    Span span = b.startSpan();
    Scope scope = span.makeCurrent();
    return (outcome, error) -> {
      try {
        if (outcome == Outcome.FAILED && error != null) {
          span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
          span.setAttribute("error.type", error.getClass().getName());
          span.recordException(error);
        }
      } finally {
        scope.close();
        span.end();
      }
    };
  }
}
