package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The event groups' columns as the validation sees them (README, "Event groups"): a grouped table
 * needs an index that starts with group_key (earlier versions' (group_key, state) too), keys are
 * short strings, and a queue of completion events is not ordered; each problem comes with the
 * statement that fixes it.
 */
class GroupSchemaTest {
  static final ColumnInfo GROUP_KEY =
      new ColumnInfo("group_key", "varchar", "varchar(191)", true, null, false);
  static final ColumnInfo COMPLETES =
      new ColumnInfo("completes_group", "varchar", "varchar(191)", true, null, false);

  /** The problems of a table with a group key of the right type and {@code indexes}. */
  static List<SchemaProblem> withIndexes(Map<String, List<String>> indexes) {
    return QueueSchemaValidator.validateGroups(
        "kids", QueueOptions.defaults(), Map.of("group_key", GROUP_KEY), indexes);
  }

  @Test
  void aGroupedTableNeedsItsIndexAndAStringKey() {
    assertThat(withIndexes(Map.of("sluice_group", List.of("group_key", "id")))).isEmpty();
    assertThat(withIndexes(Map.of("sluice_group", List.of("group_key", "state", "id")))).isEmpty();
    List<SchemaProblem> none = withIndexes(Map.of());
    assertThat(none).hasSize(1);
    assertThat(none.get(0).fix())
        .isEqualTo("ALTER TABLE `kids` ADD KEY `sluice_group` (`group_key`)");
    // An index that does not start with group_key cannot serve a group's check.
    assertThat(withIndexes(Map.of("poll", List.of("state", "group_key")))).hasSize(1);
    List<SchemaProblem> wide =
        QueueSchemaValidator.validateGroups(
            "kids",
            QueueOptions.defaults(),
            Map.of("group_key", new ColumnInfo("group_key", "bigint", "bigint", true, null, false)),
            Map.of("sluice_group", List.of("group_key", "state")));
    assertThat(wide).hasSize(1);
    assertThat(wide.get(0).problem()).contains("CHAR or VARCHAR of at most 191");
  }

  @Test
  void aQueueOfCompletionEventsIsNotOrderedAndATableWithoutTheColumnsHasNoProblem() {
    QueueOptions ordered = QueueOptions.parseComment("done", "sluice_queue ordering=queue");
    assertThat(
            QueueSchemaValidator.validateGroups(
                "done", ordered, Map.of("completes_group", COMPLETES), Map.of()))
        .extracting(SchemaProblem::problem)
        .containsExactly("a queue of completion events cannot be ordered (ordering=queue)");
    assertThat(QueueSchemaValidator.validateGroups("plain", ordered, Map.of(), Map.of())).isEmpty();
  }
}
