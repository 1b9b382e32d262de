package dev.sluice.db;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.QueueColumns;
import org.junit.jupiter.api.Test;

/**
 * The producer's copy of the convention (sluice-client) names the same columns as the manager's.
 */
class ClientColumnsTest {
  @Test
  void theClientNamesTheSameSystemColumns() {
    assertThat(QueueColumns.SYSTEM_COLUMNS).isEqualTo(QueueConvention.SYSTEM_COLUMNS);
    assertThat(QueueColumns.NOW_NS_SQL).isEqualTo(QueueConvention.NOW_NS_SQL);
    assertThat(QueueColumns.ACTOR).isEqualTo(QueueConvention.ACTOR);
  }
}
