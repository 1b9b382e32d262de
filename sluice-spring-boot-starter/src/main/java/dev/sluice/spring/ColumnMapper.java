package dev.sluice.spring;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Maps between an event's user columns and the application's records, with Jackson: snake_case
 * column names to camelCase properties and back, and JSON payload columns. Thread-safe (Jackson's
 * mappers are, once configured).
 */
final class ColumnMapper {
  private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

  private final ObjectMapper json;
  private final ObjectMapper snake;

  ColumnMapper(ObjectMapper json) {
    this.json = json.copy().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    this.snake =
        json.copy()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
  }

  /** A record's or bean's properties as columns, named in snake_case. */
  Map<String, Object> toColumns(Object data) {
    return snake.convertValue(data, MAP);
  }

  /** The columns as {@code type}: {@code order_id} fills {@code orderId} (or {@code order_id}). */
  Object fromColumns(Map<String, Object> columns, JavaType type) {
    Map<String, Object> named = new LinkedHashMap<>(columns);
    columns.forEach((k, v) -> named.putIfAbsent(camel(k), v));
    return json.convertValue(named, type);
  }

  /** A JSON document (a String or UTF-8 bytes) as {@code type}. */
  Object fromJson(Object document, JavaType type) throws IOException {
    if (document instanceof byte[] b) {
      return json.readValue(new String(b, StandardCharsets.UTF_8), type);
    }
    if (document instanceof String s) {
      return json.readValue(s, type);
    }
    throw new IllegalArgumentException(
        "a JSON payload column must hold text or bytes, not "
            + (document == null ? "null" : document.getClass().getSimpleName()));
  }

  JavaType type(java.lang.reflect.Type t) {
    return json.getTypeFactory().constructType(t);
  }

  static String camel(String snake) {
    StringBuilder sb = new StringBuilder(snake.length());
    boolean up = false;
    for (char c : snake.toCharArray()) {
      if (c == '_') {
        up = sb.length() > 0;
      } else {
        sb.append(up ? Character.toUpperCase(c) : c);
        up = false;
      }
    }
    return sb.toString();
  }
}
