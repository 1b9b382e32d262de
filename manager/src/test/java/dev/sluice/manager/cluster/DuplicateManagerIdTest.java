package dev.sluice.manager.cluster;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.manager.SluiceServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Two processes started with the same {@code manager_id} (a copied config, {@code manager-1} in
 * every container) must not both lead: the second refuses, loudly, until the first is gone.
 */
class DuplicateManagerIdTest {
  @Test
  void theSecondProcessWithTheSameIdRefusesToLead() throws Exception {
    try (Cluster c = new Cluster(DuplicateManagerIdTest.class, List.of("-80", "80-"))) {
      c.createQueue("dup_q", "");
      SluiceServer first = c.startManager("same");
      await().atMost(10, SECONDS).until(() -> Cluster.leading(first) == 2);
      SluiceServer second = c.startManager("same");
      // Both would hold every lease: the lease row names only the manager id.
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(5))
          .until(() -> Cluster.leading(second) == 0 && Cluster.leading(first) == 2);
      await().atMost(5, SECONDS).until(() -> !second.ready());
      assertThat(first.ready()).isTrue();
      assertThat(second.engine().faults().values())
          .allSatisfy(f -> assertThat(f).contains("manager_id 'same'"));

      first.stop(); // gone: its heartbeat is withdrawn, the second may lead now
      await().atMost(10, SECONDS).until(() -> Cluster.leading(second) == 2);
      await().atMost(5, SECONDS).until(second::ready);
    }
  }
}
