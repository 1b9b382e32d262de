package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Embedded MariaDB servers installed at the same moment, as test forks and modules built side by
 * side start them: every install succeeds. Before each install had a temporary directory of its
 * own, the bootstrap servers shared {@code /tmp} and one could remove another's temporary tables
 * ("Installation of system tables failed!").
 */
class EmbeddedMariaDbInstallTest {
  @Test
  void serversInstalledAtOnceAllStart() throws Exception {
    int n = 6;
    ExecutorService pool = Executors.newFixedThreadPool(n);
    List<Future<EmbeddedMariaDb>> started = new ArrayList<>();
    List<EmbeddedMariaDb> servers = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        started.add(pool.submit(EmbeddedMariaDb::start));
      }
      List<String> failures = new ArrayList<>();
      for (Future<EmbeddedMariaDb> f : started) {
        try {
          servers.add(f.get());
        } catch (java.util.concurrent.ExecutionException e) {
          failures.add(String.valueOf(e.getCause()));
        }
      }
      assertThat(failures).as("servers that could not start").isEmpty();
      assertThat(servers).hasSize(n).allMatch(s -> s.port() > 0);
    } finally {
      for (EmbeddedMariaDb s : servers) {
        s.stopServer();
      }
      pool.shutdownNow();
    }
  }
}
