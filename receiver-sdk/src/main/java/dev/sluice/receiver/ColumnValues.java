package dev.sluice.receiver;

import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import dev.sluice.proto.v1.Value;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;

/**
 * Wire values to Java values, and Java values to the types a caller asks for. Conversions are exact
 * or refused: a value that does not fit the asked type throws, it is never rounded.
 */
final class ColumnValues {
  private ColumnValues() {}

  /** A JSON column's text, kept apart from plain strings so {@code getJson} can tell them apart. */
  record Json(String text) {
    @Override
    public String toString() {
      return text;
    }
  }

  static Object toJava(Value value) {
    switch (value.getKindCase()) {
      case INT_VALUE:
        return value.getIntValue();
      case UINT_VALUE:
        long u = value.getUintValue();
        return u >= 0 ? BigInteger.valueOf(u) : new BigInteger(Long.toUnsignedString(u));
      case DOUBLE_VALUE:
        return value.getDoubleValue();
      case STRING_VALUE:
        return value.getStringValue();
      case BYTES_VALUE:
        return value.getBytesValue().toByteArray();
      case DECIMAL_VALUE:
        return new BigDecimal(value.getDecimalValue());
      case BOOL_VALUE:
        return value.getBoolValue();
      case JSON_VALUE:
        return new Json(value.getJsonValue());
      case DATE_VALUE:
        return LocalDate.parse(value.getDateValue());
      case DATETIME_VALUE:
        return LocalDateTime.parse(value.getDatetimeValue());
      case TIMESTAMP_VALUE:
        Timestamp t = value.getTimestampValue();
        return Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
      case TIME_VALUE:
        Duration d = value.getTimeValue();
        return java.time.Duration.ofSeconds(d.getSeconds(), d.getNanos());
      case NULL_VALUE:
      case KIND_NOT_SET:
      default:
        return null;
    }
  }

  /**
   * {@code v} (not null) as {@code type}, or null when it cannot be converted exactly. Boxed types
   * only; the caller maps primitives to their boxes.
   */
  static Object convert(Object v, Class<?> type) {
    if (type.isInstance(v) && !(v instanceof Json)) {
      return v;
    }
    if (type == String.class) {
      return v instanceof Json j ? j.text() : null;
    }
    if (type == Long.class) {
      return v instanceof BigInteger b && b.bitLength() < 64 ? b.longValue() : null;
    }
    if (type == Integer.class) {
      Object l = convert(v, Long.class);
      return l instanceof Long x && x == (int) (long) x ? (int) (long) x : null;
    }
    if (type == Short.class) {
      Object l = convert(v, Long.class);
      return l instanceof Long x && x == (short) (long) x ? (short) (long) x : null;
    }
    if (type == BigInteger.class) {
      if (v instanceof Long l) {
        return BigInteger.valueOf(l);
      }
      if (v instanceof BigDecimal d) {
        try {
          return d.toBigIntegerExact();
        } catch (ArithmeticException e) {
          return null;
        }
      }
      return null;
    }
    if (type == BigDecimal.class) {
      if (v instanceof Long l) {
        return BigDecimal.valueOf(l);
      }
      if (v instanceof BigInteger b) {
        return new BigDecimal(b);
      }
      return null;
    }
    if (type == Double.class) {
      if (v instanceof Long l && (long) (double) l == l) {
        return (double) l;
      }
      return null;
    }
    if (type == Boolean.class) {
      // TINYINT(1) (BOOLEAN) arrives as an integer: 0 and 1 are booleans, other values are not.
      if (v instanceof Long l && (l == 0 || l == 1)) {
        return l == 1;
      }
      return null;
    }
    return null;
  }

  /** The name of a value's kind, for error messages. */
  static String kindOf(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof Json) {
      return "JSON";
    }
    if (v instanceof byte[]) {
      return "bytes";
    }
    return v.getClass().getSimpleName();
  }
}
