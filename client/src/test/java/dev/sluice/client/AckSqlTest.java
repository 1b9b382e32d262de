package dev.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AckSqlTest {

  @Test
  void theAckSetsTheStateAndBothTimes() {
    assertThat(AckSql.set("?", "?")).isEqualTo("`state` = ?, `time_acked` = ?, `time_next` = ?");
    assertThat(AckSql.set("2", QueueColumns.NOW_NS_SQL))
        .isEqualTo(
            "`state` = 2, `time_acked` = "
                + QueueColumns.NOW_NS_SQL
                + ", `time_next` = "
                + QueueColumns.NOW_NS_SQL);
  }

  @Test
  void theGuardHasOnePlaceholderPerIdThenTheStateAndTheEpoch() {
    assertThat(AckSql.guard(1, "1")).isEqualTo("`id` in (?) and `state` = 1 and `epoch` = ?");
    assertThat(AckSql.guard(3, "?")).isEqualTo("`id` in (?,?,?) and `state` = ? and `epoch` = ?");
  }
}
