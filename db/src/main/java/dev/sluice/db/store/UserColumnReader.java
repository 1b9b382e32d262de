package dev.sluice.db.store;

import dev.sluice.db.ColumnKind;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads one user column, selected by {@link ColumnKind#selectExpression}, as the exact Java value
 * the wire carries: null, Long, BigInteger (BIGINT UNSIGNED), Double, BigDecimal, String, {@link
 * JsonText}, byte[], Boolean (BIT(1)), LocalDate, LocalDateTime, Instant (TIMESTAMP) or Duration
 * (TIME). A DATE or DATETIME the server holds but java.time cannot (a zero date) arrives as the
 * server's text, so no row is ever unreadable.
 */
final class UserColumnReader {
  private static final Pattern TIME =
      Pattern.compile("(-)?(\\d+):(\\d{2}):(\\d{2})(?:\\.(\\d{1,9}))?");

  private UserColumnReader() {}

  /** User column values as the wire carries them: null, Long, Double, String or byte[]. */
  static Object plain(Object v) {
    if (v == null || v instanceof Long || v instanceof String || v instanceof byte[]) {
      return v;
    }
    if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    if (v instanceof BigInteger b) {
      // BIGINT UNSIGNED: as a number while it fits one (a receiver's getLong keeps working), as its
      // exact decimal text above 2^63 - 1 (a long would arrive negative).
      return b.bitLength() < 64 ? (Object) b.longValue() : b.toString();
    }
    if (v instanceof Double || v instanceof Float) {
      return ((Number) v).doubleValue();
    }
    if (v instanceof BigDecimal d) {
      return d.toPlainString();
    }
    if (v instanceof Boolean b) {
      return b ? 1L : 0L;
    }
    return v.toString();
  }

  static Object read(ResultSet rs, int i, ColumnKind kind) throws SQLException {
    if (kind == null) {
      return plain(rs.getObject(i));
    }
    switch (kind) {
      case INTEGER, YEAR -> {
        long v = rs.getLong(i);
        return rs.wasNull() ? null : v;
      }
      case UNSIGNED_BIGINT -> {
        String v = rs.getString(i);
        return v == null ? null : new BigInteger(v);
      }
      case DOUBLE -> {
        double v = rs.getDouble(i);
        return rs.wasNull() ? null : v;
      }
      case FLOAT -> {
        float v = rs.getFloat(i);
        return rs.wasNull() ? null : (double) v;
      }
      case DECIMAL -> {
        return rs.getBigDecimal(i);
      }
      case TEXT, TEXT_CAST -> {
        return rs.getString(i);
      }
      case JSON -> {
        String v = rs.getString(i);
        return v == null ? null : new JsonText(v);
      }
      case BYTES, BITS -> {
        return rs.getBytes(i);
      }
      case BIT1 -> {
        byte[] v = rs.getBytes(i);
        if (v == null) {
          return null;
        }
        for (byte b : v) {
          if (b != 0) {
            return true;
          }
        }
        return false;
      }
      case DATE -> {
        String v = rs.getString(i);
        try {
          return v == null ? null : LocalDate.parse(v);
        } catch (DateTimeParseException e) {
          return v;
        }
      }
      case DATETIME -> {
        String v = rs.getString(i);
        try {
          return v == null ? null : LocalDateTime.parse(v.replace(' ', 'T'));
        } catch (DateTimeParseException e) {
          return v;
        }
      }
      case TIMESTAMP -> {
        BigDecimal v = rs.getBigDecimal(i);
        return v == null ? null : instant(v);
      }
      case TIME -> {
        String v = rs.getString(i);
        return v == null ? null : duration(v);
      }
      default -> throw new IllegalStateException("unhandled kind " + kind);
    }
  }

  /** Seconds since the epoch, with up to nine decimals, as an Instant. */
  static Instant instant(BigDecimal seconds) {
    BigDecimal whole = seconds.setScale(0, java.math.RoundingMode.FLOOR);
    long nanos = seconds.subtract(whole).movePointRight(9).longValueExact();
    return Instant.ofEpochSecond(whole.longValueExact(), nanos);
  }

  /** TIME text ({@code [-]H+:MM:SS[.f]}) as a Duration; the text itself if it does not parse. */
  static Object duration(String text) {
    Matcher m = TIME.matcher(text);
    if (!m.matches()) {
      return text;
    }
    String frac = m.group(5) == null ? "" : m.group(5);
    long nanos = frac.isEmpty() ? 0 : Long.parseLong((frac + "000000000").substring(0, 9));
    Duration d =
        Duration.ofHours(Long.parseLong(m.group(2)))
            .plusMinutes(Long.parseLong(m.group(3)))
            .plusSeconds(Long.parseLong(m.group(4)))
            .plusNanos(nanos);
    return m.group(1) != null ? d.negated() : d;
  }
}
