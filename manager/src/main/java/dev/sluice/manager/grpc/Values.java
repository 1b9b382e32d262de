package dev.sluice.manager.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import dev.sluice.db.store.JsonText;
import dev.sluice.proto.v1.Value;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Converts user column values, as the store read them (see {@code ColumnKind}), to their exact wire
 * kind.
 */
final class Values {
  private static final Value NULL = Value.newBuilder().setNullValue(true).build();
  private static final BigInteger UINT64_MAX =
      BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

  private Values() {}

  static Map<String, Value> toWire(Map<String, Object> columns) {
    Map<String, Value> out = new LinkedHashMap<>(columns.size() * 2);
    columns.forEach((k, v) -> out.put(k, toWire(v)));
    return out;
  }

  static Value toWire(Object v) {
    if (v == null) {
      return NULL;
    }
    Value.Builder b = Value.newBuilder();
    if (v instanceof Long l) {
      return b.setIntValue(l).build();
    }
    if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return b.setIntValue(((Number) v).longValue()).build();
    }
    if (v instanceof BigInteger i) {
      if (i.signum() >= 0 && i.compareTo(UINT64_MAX) <= 0) {
        return b.setUintValue(i.longValue()).build(); // the low 64 bits: uint64 on the wire
      }
      return b.setDecimalValue(i.toString()).build();
    }
    if (v instanceof Double d) {
      return b.setDoubleValue(d).build();
    }
    if (v instanceof Float f) {
      return b.setDoubleValue(f).build();
    }
    if (v instanceof BigDecimal d) {
      return b.setDecimalValue(d.toPlainString()).build();
    }
    if (v instanceof Boolean x) {
      return b.setBoolValue(x).build();
    }
    if (v instanceof byte[] bytes) {
      return b.setBytesValue(ByteString.copyFrom(bytes)).build();
    }
    if (v instanceof JsonText j) {
      return b.setJsonValue(j.json()).build();
    }
    if (v instanceof LocalDate d) {
      return b.setDateValue(d.format(DateTimeFormatter.ISO_LOCAL_DATE)).build();
    }
    if (v instanceof LocalDateTime d) {
      return b.setDatetimeValue(d.format(DateTimeFormatter.ISO_LOCAL_DATE_TIME)).build();
    }
    if (v instanceof Instant t) {
      return b.setTimestampValue(
              Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()))
          .build();
    }
    if (v instanceof java.time.Duration d) {
      // protobuf's Duration keeps seconds and nanos of the same sign; java.time's nanos are >= 0.
      long seconds = d.getSeconds();
      int nanos = d.getNano();
      if (seconds < 0 && nanos > 0) {
        seconds += 1;
        nanos -= 1_000_000_000;
      }
      return b.setTimeValue(Duration.newBuilder().setSeconds(seconds).setNanos(nanos)).build();
    }
    return b.setStringValue(v.toString()).build();
  }
}
