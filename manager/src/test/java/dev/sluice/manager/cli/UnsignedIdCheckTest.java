package dev.sluice.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23, item 1: {@code sluice check} warns about a {@code BIGINT UNSIGNED} id with the fixing
 * ALTER (the table is still served, so the exit code stays 0).
 */
class UnsignedIdCheckTest {
  static Harness h;
  @TempDir Path dir;

  @BeforeAll
  static void start() {
    h = new Harness(UnsignedIdCheckTest.class);
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void checkWarnsAboutAnUnsignedIdWithTheFixingAlter() throws Exception {
    h.exec(
        QueueConvention.createTableSql("uid_q", List.of(), "sluice_queue")
            .replace("`id` BIGINT NOT NULL", "`id` BIGINT UNSIGNED NOT NULL"));
    Cli.Result r = Cli.run("check", "-c", Cli.config(dir, h).toString());
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.out())
        .contains("uid_q  warning: id: is BIGINT UNSIGNED")
        .contains("ALTER TABLE `uid_q` MODIFY `id` BIGINT NOT NULL AUTO_INCREMENT;");
  }
}
