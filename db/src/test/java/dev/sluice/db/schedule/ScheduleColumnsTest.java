package dev.sluice.db.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The columns of a schedule's occurrences, as given on a command line and as stored. */
class ScheduleColumnsTest {
  @Test
  void textValuesAreReadAsJsonOnlyWhenTheyAreJson() {
    assertThat(ScheduleColumns.valueOfText("42")).isEqualTo(42L);
    assertThat(ScheduleColumns.valueOfText("true")).isEqualTo(true);
    assertThat(ScheduleColumns.valueOfText("null")).isNull();
    assertThat(ScheduleColumns.valueOfText("\"42\"")).isEqualTo("42");
    assertThat(ScheduleColumns.valueOfText("nightly")).isEqualTo("nightly");
    assertThat(ScheduleColumns.valueOfText("2026-01-01")).isEqualTo("2026-01-01");
    assertThat(ScheduleColumns.valueOfText("12 monkeys")).isEqualTo("12 monkeys");
  }

  @Test
  void storedAsAJsonObjectAndReadBack() {
    String json =
        ScheduleColumns.toJson(
            "q",
            Map.of(
                "n", 7L, "doc", ScheduleColumns.valueOfText("{\"a\": [1, 2]}"), "tenant", "acme"));
    Map<String, Object> back = ScheduleColumns.parse("s", "q", json);
    assertThat(back).containsEntry("n", 7L).containsEntry("tenant", "acme");
    assertThat(back.get("doc")).isEqualTo("{\"a\":[1,2]}");
  }

  @Test
  void systemColumnsAndBadJsonAreRefusedByName() {
    assertThatThrownBy(() -> ScheduleColumns.toJson("q", Map.of("time_next", 1)))
        .hasMessageContaining("queue q: column 'time_next' is a system column");
    assertThatThrownBy(() -> ScheduleColumns.parse("s", "q", "[1]"))
        .hasMessageContaining("schedule s (queue q): event_columns must be a JSON object");
    assertThatThrownBy(() -> ScheduleColumns.parse("s", "q", "{bad"))
        .hasMessageContaining("schedule s (queue q): event_columns is not JSON");
  }
}
