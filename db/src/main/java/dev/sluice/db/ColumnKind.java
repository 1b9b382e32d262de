package dev.sluice.db;

import java.util.Locale;

/**
 * How a user column's SQL type travels to receivers, so that every value arrives exactly: each kind
 * says how the store reads the column (the select expression and the JDBC getter) and which Java
 * type carries it to the wire. A type without a kind ({@link #of} returns null) is refused when the
 * queue is validated: its values could not be delivered exactly.
 *
 * <p>Time zones: {@link #TIMESTAMP} is an instant and is read as {@code UNIX_TIMESTAMP(col)}, so
 * neither the session's nor the JVM's time zone can shift it; {@link #DATETIME}, {@link #DATE} and
 * {@link #TIME} carry no zone in SQL and are read as the server's text ({@code CAST(col AS CHAR)}),
 * so they arrive as stored, without a zone invented for them.
 */
public enum ColumnKind {
  /** Signed integers, unsigned ones but BIGINT; TINYINT(1) included (it may hold -128..127). */
  INTEGER,
  /** BIGINT UNSIGNED: read as a BigInteger, 0 .. 2^64-1. */
  UNSIGNED_BIGINT,
  /** YEAR: read as its number. */
  YEAR,
  /** DOUBLE (and REAL). */
  DOUBLE,
  /** FLOAT: a single-precision value, widened exactly to a double. */
  FLOAT,
  /** DECIMAL / NUMERIC: a BigDecimal with the column's scale. */
  DECIMAL,
  /** Character types, ENUM and SET. */
  TEXT,
  /** MariaDB's INET4, INET6 and UUID, read as their text. */
  TEXT_CAST,
  /** MySQL's JSON type: the document's text. */
  JSON,
  /** Binary strings and BLOBs. */
  BYTES,
  /** BIT(1): a boolean. */
  BIT1,
  /** BIT(n), n > 1: the bits as big-endian bytes. */
  BITS,
  /** DATE: a LocalDate (the server's text when it is not a valid date, e.g. 0000-00-00). */
  DATE,
  /** DATETIME: a LocalDateTime without a time zone. */
  DATETIME,
  /** TIMESTAMP: an Instant. */
  TIMESTAMP,
  /** TIME: a Duration (TIME is an interval, -838:59:59 .. 838:59:59). */
  TIME;

  /** The kind of a column, or null if its type cannot be delivered exactly. */
  public static ColumnKind of(ColumnInfo c) {
    String type = c.dataType().toLowerCase(Locale.ROOT);
    String full = c.columnType() == null ? type : c.columnType().toLowerCase(Locale.ROOT);
    return switch (type) {
      case "tinyint", "smallint", "mediumint", "int", "integer" -> INTEGER;
      case "bigint" -> full.contains("unsigned") ? UNSIGNED_BIGINT : INTEGER;
      case "year" -> YEAR;
      case "double", "real", "double precision" -> DOUBLE;
      case "float" -> FLOAT;
      case "decimal", "numeric", "dec", "fixed" -> DECIMAL;
      case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set" -> TEXT;
      case "inet4", "inet6", "uuid" -> TEXT_CAST;
      case "json" -> JSON;
      case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob" -> BYTES;
      case "bit" -> full.equals("bit(1)") || full.equals("bit") ? BIT1 : BITS;
      case "date" -> DATE;
      case "datetime" -> DATETIME;
      case "timestamp" -> TIMESTAMP;
      case "time" -> TIME;
      default -> null;
    };
  }

  /** The expression that selects {@code quoted} (an already quoted column name). */
  public String selectExpression(String quoted) {
    return switch (this) {
      case DATE, DATETIME, TIME, TEXT_CAST -> "cast(" + quoted + " as char)";
      case TIMESTAMP -> "unix_timestamp(" + quoted + ")";
      case YEAR -> "cast(" + quoted + " as signed)";
      default -> quoted;
    };
  }
}
