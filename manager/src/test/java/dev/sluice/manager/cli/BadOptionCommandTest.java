package dev.sluice.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.manager.Harness;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice check} and {@code sluice queue list} report a comment whose value overflows or
 * exceeds its bound on its own table's line, and go on to the other tables.
 */
class BadOptionCommandTest {
  static Harness h;
  @TempDir static Path dir;
  static String config;

  @BeforeAll
  static void start() throws Exception {
    h = new Harness(BadOptionCommandTest.class);
    h.createQueue("a_good_q", "");
    h.createQueueWithComment("b_huge_q", "sluice_queue ack_wait=999999999999999d");
    h.createQueue("c_good_q", "max_attempts=3");
    config = Cli.config(dir, h).toString();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void checkReportsTheBadTableAndChecksTheOthers() {
    Cli.Result r = Cli.run("check", "-c", config);
    assertThat(r.code()).as(r.toString()).isEqualTo(1);
    assertThat(r.out())
        .containsPattern("s1\\s+a_good_q\\s+ok")
        .containsPattern("s1\\s+b_huge_q\\s+.*ack_wait=999999999999999d is too large: at most 1d")
        .containsPattern("s1\\s+c_good_q\\s+ok")
        .contains("fix: ALTER TABLE `b_huge_q` COMMENT = 'sluice_queue';");
  }

  @Test
  void listShowsTheBadTableAndTheOthers() {
    Cli.Result r = Cli.run("queue", "list", "-c", config);
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.out())
        .containsPattern("s1\\s+a_good_q\\s+valid")
        .containsPattern("s1\\s+b_huge_q\\s+INVALID\\s+-\\s+.*at most 1d")
        .containsPattern("s1\\s+c_good_q\\s+valid\\s+-\\s+max_attempts=3");
  }
}
