package dev.sluice.manager.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.client.EventProducer;
import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.receiver.MicrometerReceiverMetrics;
import dev.sluice.receiver.OpenTelemetryTracing;
import dev.sluice.receiver.SluiceReceiver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The receiver SDK's observers through a real manager: the producer's trace continues in the
 * handler as a CONSUMER span (parent and link: the producer's span, carried by the traceparent
 * column that EventProducer filled), the handler's own spans are its children, a failed handling is
 * an ERROR span; and the Micrometer meters count handlings by outcome, acks and nacks.
 */
class ReceiverObservabilityTest {
  @Test
  void traceContinuesFromProducerToHandlerAndMetersCountOutcomes() throws Exception {
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    OpenTelemetrySdk otel =
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(spans))
                    .build())
            .build();
    Tracer app = otel.getTracer("app");
    // Prometheus, as operators scrape it: percentile histograms only show in registries that
    // aggregate them.
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    try (Harness h = new Harness(ReceiverObservabilityTest.class)) {
      h.exec(
          QueueConvention.createTableSql(
              "traced_q",
              List.of("`order_id` BIGINT NULL", "`traceparent` VARCHAR(55) NULL"),
              "sluice_queue min_backoff=50ms max_backoff=100ms"));
      Span checkout = app.spanBuilder("checkout").startSpan();
      long traced;
      try (Scope s = checkout.makeCurrent();
          Connection c = h.connect()) {
        traced = EventProducer.insert(c, "traced_q", Map.of("order_id", 1));
      } finally {
        checkout.end();
      }
      long untraced;
      try (Connection c = h.connect()) {
        untraced = EventProducer.insert(c, "traced_q", Map.of("order_id", 2));
      }
      assertThat(h.queryLong("SELECT COUNT(*) FROM traced_q WHERE traceparent LIKE '00-%'"))
          .isEqualTo(1);

      h.startManager();
      Map<Long, AtomicInteger> attempts = new ConcurrentHashMap<>();
      h.closeLater(
          SluiceReceiver.builder()
              .target(h.target())
              .queue("traced_q")
              .receiverId("observed")
              .observer(new OpenTelemetryTracing(otel))
              .observer(new MicrometerReceiverMetrics(registry))
              .handler(
                  e -> {
                    int n =
                        attempts
                            .computeIfAbsent(e.id(), k -> new AtomicInteger())
                            .incrementAndGet();
                    app.spanBuilder("handler-work").startSpan().end();
                    if (e.id() == untraced && n == 1) {
                      throw new IllegalStateException("first attempt fails");
                    }
                  })
              .build()
              .start());
      await().until(() -> h.queryLong("SELECT COUNT(*) FROM traced_q WHERE state = 2") == 2);

      List<SpanData> all = spans.getFinishedSpanItems();
      SpanData producer = only(all, "checkout");
      List<SpanData> process =
          all.stream().filter(s -> s.getName().equals("process traced_q")).toList();
      assertThat(process).hasSize(3).allMatch(s -> s.getKind() == SpanKind.CONSUMER);
      SpanData consumer =
          process.stream()
              .filter(s -> String.valueOf(traced).equals(attr(s, "messaging.message.id")))
              .findFirst()
              .orElseThrow();
      assertThat(consumer.getTraceId()).isEqualTo(producer.getTraceId());
      assertThat(consumer.getParentSpanId()).isEqualTo(producer.getSpanId());
      assertThat(consumer.getLinks())
          .anyMatch(l -> l.getSpanContext().getSpanId().equals(producer.getSpanId()));
      assertThat(attr(consumer, "messaging.system")).isEqualTo("sluice");
      assertThat(attr(consumer, "messaging.destination.name")).isEqualTo("traced_q");
      assertThat(attr(consumer, "messaging.operation.type")).isEqualTo("process");
      assertThat(all)
          .anyMatch(
              s ->
                  s.getName().equals("handler-work")
                      && s.getParentSpanId().equals(consumer.getSpanId()));
      List<SpanData> untracedSpans =
          process.stream()
              .filter(s -> String.valueOf(untraced).equals(attr(s, "messaging.message.id")))
              .toList();
      assertThat(untracedSpans)
          .hasSize(2)
          .noneMatch(s -> s.getTraceId().equals(producer.getTraceId()));
      assertThat(untracedSpans)
          .anyMatch(
              s ->
                  s.getStatus().getStatusCode() == StatusCode.ERROR
                      && "java.lang.IllegalStateException".equals(attr(s, "error.type")));

      assertThat(timerCount(registry, "acked")).isEqualTo(2);
      assertThat(timerCount(registry, "failed")).isEqualTo(1);
      // The dashboard's SDK p99 panel reads the histogram's buckets.
      assertThat(registry.scrape())
          .as("histogram buckets of sluice.receiver.handling")
          .containsPattern("sluice_receiver_handling_seconds_bucket\\{[^}]*outcome=\"acked\"");
      assertThat(registry.get("sluice.receiver.completions").tag("result", "ack").counter().count())
          .isEqualTo(2);
      assertThat(
              registry.get("sluice.receiver.completions").tag("result", "nack").counter().count())
          .isEqualTo(1);
      assertThat(registry.get("sluice.receiver.in.flight").tag("queue", "traced_q").gauge().value())
          .isZero();
    }
  }

  private static long timerCount(MeterRegistry registry, String outcome) {
    return registry
        .get("sluice.receiver.handling")
        .tag("queue", "traced_q")
        .tag("outcome", outcome)
        .timer()
        .count();
  }

  private static String attr(SpanData s, String key) {
    Object v = s.getAttributes().get(AttributeKey.stringKey(key));
    return v == null ? null : v.toString();
  }

  private static SpanData only(List<SpanData> all, String name) {
    List<SpanData> found = all.stream().filter(s -> s.getName().equals(name)).toList();
    assertThat(found).hasSize(1);
    return found.get(0);
  }
}
