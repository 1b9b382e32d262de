package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.testkit.TypedColumns.Column;
import java.util.ArrayList;
import java.util.List;

/**
 * The typed-columns check: a {@code received} line's columns against {@link
 * dev.sluice.testkit.TypedColumns}, kind and value exactly, in the contract's canonical form.
 */
final class TypedExpectations {
  private TypedExpectations() {}

  /** The row of values: every column, its kind and value as inserted. */
  static void checkValues(JsonNode received, List<Column> expected) {
    JsonNode columns = received.path("columns");
    assertThat(names(columns))
        .as("columns of %s", received)
        .containsExactlyInAnyOrderElementsOf(expected.stream().map(Column::name).toList());
    for (Column c : expected) {
      JsonNode got = columns.path(c.name());
      assertThat(got.path("kind").asText())
          .as("kind of %s (%s)", c.name(), c.type())
          .isEqualTo(c.kind());
      JsonNode v = got.path("value");
      switch (c.kind()) {
        case "double" -> {
          // A JSON number or a string, parsing to the same IEEE double.
          assertThat(v.isNumber() || v.isTextual()).as("value of %s: %s", c.name(), v).isTrue();
          assertThat(Double.parseDouble(v.asText()))
              .as("value of %s (%s): %s", c.name(), c.type(), v)
              .isEqualTo(Double.parseDouble(c.value()));
        }
        case "bool" -> {
          assertThat(v.isBoolean()).as("value of %s: a JSON boolean, %s", c.name(), v).isTrue();
          assertThat(Boolean.toString(v.booleanValue()))
              .as("value of %s", c.name())
              .isEqualTo(c.value());
        }
        default -> {
          assertThat(v.isTextual()).as("value of %s: a string, %s", c.name(), v).isTrue();
          assertThat(v.asText()).as("value of %s (%s)", c.name(), c.type()).isEqualTo(c.value());
        }
      }
    }
  }

  /** The row of NULLs: every column of kind null, value null. */
  static void checkNulls(JsonNode received, List<Column> expected) {
    JsonNode columns = received.path("columns");
    assertThat(names(columns))
        .as("columns of %s", received)
        .containsExactlyInAnyOrderElementsOf(expected.stream().map(Column::name).toList());
    for (Column c : expected) {
      JsonNode got = columns.path(c.name());
      assertThat(got.path("kind").asText()).as("kind of NULL in %s", c.name()).isEqualTo("null");
      assertThat(got.path("value").isNull()).as("value of NULL in %s: %s", c.name(), got).isTrue();
    }
  }

  private static List<String> names(JsonNode columns) {
    List<String> names = new ArrayList<>();
    columns.fieldNames().forEachRemaining(names::add);
    return names;
  }
}
