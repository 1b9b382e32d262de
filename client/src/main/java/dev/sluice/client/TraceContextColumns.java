package dev.sluice.client;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The producer's trace context for an event's optional {@code traceparent} (and {@code tracestate})
 * columns, W3C Trace Context format, so the receiver can continue the trace. Only when the
 * OpenTelemetry API is on the class path (an optional dependency), a span is current, and the queue
 * table has the column: whether it has is looked up once per table and process.
 */
final class TraceContextColumns {
  static final String TRACEPARENT = "traceparent";
  static final String TRACESTATE = "tracestate";

  private static final boolean OTEL = present("io.opentelemetry.context.Context");
  private static final Map<String, Map<String, Boolean>> COLUMNS = new ConcurrentHashMap<>();

  private TraceContextColumns() {}

  /** The columns to add to an insert into {@code queue}; empty when there is nothing to carry. */
  static Map<String, String> current(Connection c, String queue) throws SQLException {
    if (!OTEL) {
      return Map.of();
    }
    Map<String, String> headers = Otel.inject();
    if (headers.isEmpty()) {
      return Map.of();
    }
    Map<String, Boolean> has = columns(c, queue);
    Map<String, String> out = new LinkedHashMap<>();
    headers.forEach(
        (k, v) -> {
          if (has.getOrDefault(k, false)) {
            out.put(k, v);
          }
        });
    return out;
  }

  private static Map<String, Boolean> columns(Connection c, String queue) throws SQLException {
    String key = c.getCatalog() + "." + queue;
    Map<String, Boolean> known = COLUMNS.get(key);
    if (known != null) {
      return known;
    }
    Map<String, Boolean> found = new ConcurrentHashMap<>();
    found.put(TRACEPARENT, false);
    found.put(TRACESTATE, false);
    try (ResultSet rs = c.getMetaData().getColumns(c.getCatalog(), null, queue, "trace%")) {
      while (rs.next()) {
        String name = rs.getString("COLUMN_NAME").toLowerCase(java.util.Locale.ROOT);
        if (found.containsKey(name)) {
          found.put(name, true);
        }
      }
    }
    COLUMNS.put(key, found);
    return found;
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, TraceContextColumns.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Kept apart so that the OpenTelemetry classes load only when present. */
  private static final class Otel {
    static Map<String, String> inject() {
      if (!Span.current().getSpanContext().isValid()) {
        return Map.of();
      }
      Map<String, String> headers = new LinkedHashMap<>();
      W3CTraceContextPropagator.getInstance().inject(Context.current(), headers, Map::put);
      return headers;
    }
  }
}
