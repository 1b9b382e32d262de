package dev.sluice.db;

/**
 * A column of a queue table as information_schema describes it.
 *
 * @param dataType lower-case base type, e.g. {@code bigint}, {@code enum}, {@code varchar}
 * @param columnType the full type, e.g. {@code enum('pending','fired')}
 * @param defaultValue the default as information_schema shows it, null when there is none
 */
public record ColumnInfo(
    String name,
    String dataType,
    String columnType,
    boolean nullable,
    String defaultValue,
    boolean autoIncrement) {

  public boolean isInteger() {
    return switch (dataType) {
      case "tinyint", "smallint", "mediumint", "int", "integer", "bigint" -> true;
      default -> false;
    };
  }

  public boolean isText() {
    return dataType.equals("varchar") || dataType.equals("char");
  }

  public boolean hasDefault() {
    return defaultValue != null;
  }

  /** The default without quotes: {@code 'pending'} and {@code pending} both give pending. */
  public String defaultUnquoted() {
    if (defaultValue == null) {
      return null;
    }
    String d = defaultValue.strip();
    if (d.length() >= 2 && d.startsWith("'") && d.endsWith("'")) {
      d = d.substring(1, d.length() - 1);
    }
    return d;
  }
}
