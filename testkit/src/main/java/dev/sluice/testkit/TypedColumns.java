package dev.sluice.testkit;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One column of every MySQL/MariaDB type a queue table may carry, the literal a test inserts into
 * it, and what that value must become for a receiver. The manager's {@code TypedPayloadTest} (the
 * Java SDK's typed getters) and the receiver conformance suite (every client, in the canonical form
 * of {@code conformance/CONTRACT.md}) insert this same row: extremes, fractions, a DATETIME that
 * does not exist in Central Europe, a TIMESTAMP that must not move with any time zone.
 */
public final class TypedColumns {
  private TypedColumns() {}

  /**
   * One user column.
   *
   * @param name the column's name
   * @param type its SQL type
   * @param literal the SQL literal inserted
   * @param kind the value's kind on the wire, as the conformance contract names it ({@code int},
   *     {@code uint}, {@code double}, {@code decimal}, {@code string}, {@code json}, {@code bytes},
   *     {@code bool}, {@code date}, {@code datetime}, {@code timestamp}, {@code time})
   * @param value the value in the contract's canonical form: decimal text for integers, decimals,
   *     timestamps (microseconds since the Unix epoch) and times (signed microseconds); standard
   *     base64 for bytes; {@code true}/{@code false}; the text for the others; for a double, a text
   *     that parses to the same IEEE double
   */
  public record Column(String name, String type, String literal, String kind, String value) {
    /** The column's definition in a CREATE TABLE, nullable. */
    public String definition() {
      return "`" + name + "` " + type + (type.endsWith("NULL") ? "" : " NULL");
    }
  }

  /** The columns for the server at hand: MariaDB has INET6 and UUID besides. */
  public static List<Column> of(boolean mariadb) {
    List<Column> c =
        new ArrayList<>(
            List.of(
                new Column("c_tinyint", "TINYINT", "-128", "int", "-128"),
                new Column("c_bool", "BOOLEAN", "1", "int", "1"),
                new Column("c_bool_odd", "TINYINT(1)", "5", "int", "5"),
                new Column("c_smallint", "SMALLINT UNSIGNED", "65535", "int", "65535"),
                new Column("c_mediumint", "MEDIUMINT", "-8388608", "int", "-8388608"),
                new Column("c_int", "INT UNSIGNED", "4294967295", "int", "4294967295"),
                new Column(
                    "c_bigint", "BIGINT", "-9223372036854775808", "int", "-9223372036854775808"),
                new Column(
                    "c_ubigint",
                    "BIGINT UNSIGNED",
                    "18446744073709551615",
                    "uint",
                    "18446744073709551615"),
                new Column(
                    "c_decimal",
                    "DECIMAL(30,10)",
                    "'12345678901234567890.0123456789'",
                    "decimal",
                    "12345678901234567890.0123456789"),
                new Column("c_numeric", "NUMERIC(5,2)", "'-0.50'", "decimal", "-0.50"),
                // A FLOAT widened exactly to a double: 1.1f, not 1.1.
                new Column("c_float", "FLOAT", "1.1", "double", Double.toString((double) 1.1f)),
                new Column("c_double", "DOUBLE", "0.1", "double", "0.1"),
                new Column("c_char", "CHAR(3)", "'abc'", "string", "abc"),
                new Column(
                    "c_varchar",
                    "VARCHAR(64)",
                    "'h\u00e9llo \u2603 \ud83d\ude00'",
                    "string",
                    "h\u00e9llo \u2603 \ud83d\ude00"),
                new Column("c_text", "TEXT", "'line1\\nline2'", "string", "line1\nline2"),
                new Column("c_enum", "ENUM('red','green')", "'green'", "string", "green"),
                new Column("c_set", "SET('a','b','c')", "'a,c'", "string", "a,c"),
                new Column("c_binary", "BINARY(3)", "X'00FF10'", "bytes", "AP8Q"),
                new Column("c_varbinary", "VARBINARY(8)", "X'DEADBEEF'", "bytes", "3q2+7w=="),
                new Column("c_blob", "BLOB", "X'0001FEFF'", "bytes", "AAH+/w=="),
                new Column("c_bit1", "BIT(1)", "b'1'", "bool", "true"),
                // BIT(n), n > 1: big-endian bytes, 0x02 0x01.
                new Column("c_bits", "BIT(10)", "b'1000000001'", "bytes", "AgE="),
                new Column("c_date", "DATE", "'2024-02-29'", "date", "2024-02-29"),
                new Column(
                    "c_datetime",
                    "DATETIME(6)",
                    "'2024-03-31 02:30:00.123456'",
                    "datetime",
                    "2024-03-31T02:30:00.123456"),
                new Column(
                    "c_timestamp",
                    "TIMESTAMP(6) NULL",
                    "FROM_UNIXTIME(1700000000.654321)",
                    "timestamp",
                    "1700000000654321"),
                new Column("c_time", "TIME(6)", "'-838:59:59.000000'", "time", "-3020399000000"),
                new Column("c_time_long", "TIME(1)", "'25:00:00.5'", "time", "90000500000"),
                new Column("c_year", "YEAR", "2155", "int", "2155"),
                // MySQL's JSON type travels as json; MariaDB's JSON is an alias of LONGTEXT.
                new Column(
                    "c_json",
                    "JSON",
                    "'{\"a\": 1, \"b\": [true, null]}'",
                    mariadb ? "string" : "json",
                    "{\"a\": 1, \"b\": [true, null]}")));
    if (mariadb) {
      c.add(new Column("c_inet6", "INET6", "'2001:db8::1'", "string", "2001:db8::1"));
      c.add(
          new Column(
              "c_uuid",
              "UUID",
              "'123e4567-e89b-12d3-a456-426655440000'",
              "string",
              "123e4567-e89b-12d3-a456-426655440000"));
    }
    return c;
  }

  /** Whether {@code c} is connected to MariaDB (else MySQL). */
  public static boolean isMariaDb(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT VERSION()")) {
      rs.next();
      return rs.getString(1).toLowerCase(Locale.ROOT).contains("mariadb");
    }
  }

  /** The columns' definitions, for a CREATE TABLE. */
  public static List<String> definitions(List<Column> columns) {
    return columns.stream().map(Column::definition).toList();
  }

  /**
   * One INSERT of two rows: id {@code valuesId} with every literal, id {@code nullsId} with every
   * column NULL.
   */
  public static String insertSql(String table, List<Column> columns, long valuesId, long nullsId) {
    StringBuilder names = new StringBuilder("id");
    StringBuilder values = new StringBuilder(Long.toString(valuesId));
    StringBuilder nulls = new StringBuilder(Long.toString(nullsId));
    for (Column c : columns) {
      names.append(", `").append(c.name()).append('`');
      values.append(", ").append(c.literal());
      nulls.append(", NULL");
    }
    return "INSERT INTO " + table + " (" + names + ") VALUES (" + values + "), (" + nulls + ")";
  }
}
