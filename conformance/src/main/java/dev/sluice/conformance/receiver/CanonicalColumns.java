package dev.sluice.conformance.receiver;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.proto.v1.Value;
import dev.sluice.receiver.ReceivedEvent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Map;

/**
 * An event's columns in the contract's canonical form ({@code {"kind": K, "value": V}}), written
 * back from the Java values the SDK gives the application ({@link ReceivedEvent#columns()}), not
 * from the protobuf message: a value the SDK's mapping changed would show. The one thing the Java
 * value does not tell is whether a string came as JSON; that kind is read from the wire.
 */
final class CanonicalColumns {
  private CanonicalColumns() {}

  static ObjectNode of(ReceivedEvent event, JsonLines lines) {
    ObjectNode columns = lines.object();
    for (Map.Entry<String, Object> c : event.columns().entrySet()) {
      Value wire = event.raw().getColumnsMap().get(c.getKey());
      boolean json = wire != null && wire.getKindCase() == Value.KindCase.JSON_VALUE;
      ObjectNode v = columns.putObject(c.getKey());
      put(v, c.getValue(), json, event, c.getKey());
    }
    return columns;
  }

  private static void put(ObjectNode v, Object value, boolean json, ReceivedEvent e, String name) {
    if (value == null) {
      v.put("kind", "null").putNull("value");
    } else if (value instanceof Long l) {
      v.put("kind", "int").put("value", Long.toString(l));
    } else if (value instanceof BigInteger i) {
      v.put("kind", "uint").put("value", i.toString());
    } else if (value instanceof Double d) {
      v.put("kind", "double").put("value", d);
    } else if (value instanceof BigDecimal d) {
      v.put("kind", "decimal").put("value", d.toPlainString());
    } else if (value instanceof String s) {
      v.put("kind", json ? "json" : "string").put("value", s);
    } else if (value instanceof byte[] b) {
      v.put("kind", "bytes").put("value", Base64.getEncoder().encodeToString(b));
    } else if (value instanceof Boolean b) {
      v.put("kind", "bool").put("value", b);
    } else if (value instanceof LocalDate d) {
      v.put("kind", "date").put("value", d.format(DateTimeFormatter.ISO_LOCAL_DATE));
    } else if (value instanceof LocalDateTime d) {
      v.put("kind", "datetime").put("value", d.format(DateTimeFormatter.ISO_LOCAL_DATE_TIME));
    } else if (value instanceof Instant t) {
      long micros =
          Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000);
      v.put("kind", "timestamp").put("value", Long.toString(micros));
    } else if (value instanceof Duration d) {
      // java.time keeps nanos in 0..999,999,999 with the seconds floored: the sum is signed.
      long micros =
          Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1000);
      v.put("kind", "time").put("value", Long.toString(micros));
    } else {
      throw new IllegalStateException(
          "column '"
              + name
              + "' of "
              + e.describe()
              + " is a "
              + value.getClass().getName()
              + ", which this receiver cannot write");
    }
  }
}
