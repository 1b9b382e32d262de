package dev.sluice.db.schedule;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.client.QueueColumns;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The columns of a schedule's occurrences: a JSON object of column name to value, kept in {@code
 * sluice_schedule.event_columns}. Strings, numbers, booleans and null are bound as such; an object
 * or array is bound as its JSON text (for a JSON column). User columns, plus {@code tenant}, {@code
 * priority} and {@code actor}; the other system columns are Sluice's.
 */
public final class ScheduleColumns {
  /** Strict: {@code 2026-01-01} is text, not the number 2026 followed by the rest. */
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /** System columns a schedule may set. */
  public static final Set<String> ALLOWED_SYSTEM =
      Set.of(QueueColumns.TENANT, QueueColumns.PRIORITY, QueueColumns.ACTOR);

  private ScheduleColumns() {}

  /** Parses the column; null or blank is no column. A clear error names schedule and queue. */
  public static Map<String, Object> parse(String schedule, String queue, String json) {
    Map<String, Object> out = new LinkedHashMap<>();
    if (json == null || json.isBlank()) {
      return out;
    }
    JsonNode root;
    try {
      root = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "schedule " + schedule + " (queue " + queue + "): event_columns is not JSON: " + json, e);
    }
    if (root == null || root.isNull()) {
      return out;
    }
    if (!root.isObject()) {
      throw new IllegalArgumentException(
          "schedule "
              + schedule
              + " (queue "
              + queue
              + "): event_columns must be a JSON object of column -> value, was "
              + json);
    }
    for (Map.Entry<String, JsonNode> e : root.properties()) {
      out.put(checkName(queue, e.getKey()), value(e.getValue()));
    }
    return out;
  }

  /** The JSON text of {@code columns} (names checked); {@code {}} when null or empty. */
  public static String toJson(String queue, Map<String, ?> columns) {
    Map<String, Object> m = new LinkedHashMap<>();
    if (columns != null) {
      columns.forEach((k, v) -> m.put(checkName(queue, k), v));
    }
    try {
      return JSON.writeValueAsString(m);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("queue " + queue + ": columns are not JSON: " + m, e);
    }
  }

  /**
   * Reads a value given as text ({@code k=v} on a command line): JSON when it parses, else text.
   */
  public static Object valueOfText(String text) {
    try {
      JsonNode n = JSON.readTree(text);
      if (n != null && !n.isMissingNode() && (n.isNumber() || n.isBoolean() || n.isNull())) {
        return value(n);
      }
      if (n != null && n.isTextual() && text.strip().startsWith("\"")) {
        return n.asText();
      }
      if (n != null && (n.isObject() || n.isArray())) {
        return n;
      }
    } catch (JsonProcessingException e) {
      // plain text
    }
    return text;
  }

  private static String checkName(String queue, String name) {
    QueueColumns.requireIdentifier("column name", name);
    if (QueueColumns.SYSTEM_COLUMNS.contains(name) && !ALLOWED_SYSTEM.contains(name)) {
      throw new IllegalArgumentException(
          "queue "
              + queue
              + ": column '"
              + name
              + "' is a system column a schedule cannot set (allowed: tenant, priority, actor)");
    }
    return name;
  }

  private static Object value(JsonNode n) {
    if (n == null || n.isNull()) {
      return null;
    }
    if (n.isTextual()) {
      return n.asText();
    }
    if (n.isBoolean()) {
      return n.booleanValue();
    }
    if (n.isIntegralNumber()) {
      return n.canConvertToLong() ? (Object) n.longValue() : n.bigIntegerValue();
    }
    if (n.isNumber()) {
      return n.decimalValue();
    }
    return n.toString();
  }
}
