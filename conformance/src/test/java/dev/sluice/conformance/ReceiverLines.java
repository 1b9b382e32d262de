package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** Reading a receiver's lines: by event, and whether each has the contract's shape. */
final class ReceiverLines {
  private static final Pattern DECIMAL = Pattern.compile("-?[0-9]+");
  private static final Set<String> TYPES =
      Set.of("ready", "received", "handled", "ack_result", "error", "stopped");
  private static final Set<String> KINDS =
      Set.of(
          "null",
          "int",
          "uint",
          "double",
          "decimal",
          "string",
          "json",
          "date",
          "datetime",
          "bytes",
          "timestamp",
          "time",
          "bool");

  private ReceiverLines() {}

  /** The event a line is about: {@code shard/id}. */
  static String key(JsonNode line) {
    return line.path("shard").asText() + "/" + line.path("id").asText();
  }

  /** The lines by event, each event's in the order printed. */
  static Map<String, List<JsonNode>> byEvent(List<JsonNode> lines) {
    Map<String, List<JsonNode>> out = new LinkedHashMap<>();
    for (JsonNode l : lines) {
      out.computeIfAbsent(key(l), k -> new java.util.ArrayList<>()).add(l);
    }
    return out;
  }

  /** Every line the process printed has the contract's shape, and stdout held nothing else. */
  static void checkFormat(ReceiverProcess p) {
    assertThat(p.garbage()).as("stdout lines of %s that are not JSON", p.describe()).isEmpty();
    for (JsonNode l : p.lines()) {
      String type = l.path("type").asText();
      assertThat(TYPES).as("type of %s", l).contains(type);
      switch (type) {
        case "received", "handled", "ack_result" -> {
          assertThat(l.path("id").isTextual() && DECIMAL.matcher(l.path("id").asText()).matches())
              .as("id of %s: a decimal string", l)
              .isTrue();
          assertThat(
                  l.path("epoch").isTextual()
                      && DECIMAL.matcher(l.path("epoch").asText()).matches())
              .as("epoch of %s: a decimal string", l)
              .isTrue();
          assertThat(l.path("shard").isTextual()).as("shard of %s", l).isTrue();
        }
        case "error" -> {
          assertThat(l.path("code").asText()).as("code of %s", l).matches("[A-Z_]+");
          assertThat(l.path("message").isTextual()).as("message of %s", l).isTrue();
        }
        default -> {
          // ready, stopped: the type alone
        }
      }
      switch (type) {
        case "received" -> {
          assertThat(l.path("last_attempt").isBoolean()).as("last_attempt of %s", l).isTrue();
          assertThat(l.path("columns").isObject()).as("columns of %s", l).isTrue();
          l.path("columns")
              .properties()
              .forEach(
                  c -> {
                    assertThat(KINDS)
                        .as("kind of column %s in %s", c.getKey(), l)
                        .contains(c.getValue().path("kind").asText());
                    assertThat(c.getValue().has("value"))
                        .as("value of column %s in %s", c.getKey(), l)
                        .isTrue();
                  });
        }
        case "handled" ->
            assertThat(l.path("outcome").asText()).as("outcome of %s", l).isIn("ack", "nack");
        case "ack_result" ->
            assertThat(l.path("status").asText())
                .as("status of %s", l)
                .isIn("OK", "STALE", "UNKNOWN");
        default -> {
          // checked above
        }
      }
    }
  }
}
