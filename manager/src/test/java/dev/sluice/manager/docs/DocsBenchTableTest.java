package dev.sluice.manager.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The table of current figures in BENCHMARKS.md is the one {@code scripts/bench-table} writes from
 * the summary lines in docs/bench-results/: a figure edited by hand in the table, or a result file
 * changed without writing the table again, fails here. Needs python3 (the script's language, as the
 * project's other scripts); skipped without it.
 */
class DocsBenchTableTest {
  @Test
  void theHeadlineTableIsTheScriptsOutput() throws Exception {
    assumeTrue(python3(), "python3 is not on the PATH");
    Path root = Docs.root();
    List<String> cmd = new ArrayList<>(List.of("python3", "scripts/bench-table", "--check"));
    cmd.add("BENCHMARKS.md");
    try (Stream<Path> s = Files.list(root.resolve("docs/bench-results"))) {
      s.filter(p -> p.toString().endsWith(".txt"))
          .sorted()
          .forEach(p -> cmd.add(root.relativize(p).toString()));
    }
    assertThat(cmd).as("result files").hasSizeGreaterThan(8);
    Process p = new ProcessBuilder(cmd).directory(root.toFile()).redirectErrorStream(true).start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("bench-table finished").isTrue();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as(out).isZero();
  }

  private static boolean python3() {
    try {
      Process p = new ProcessBuilder("python3", "--version").redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException | InterruptedException e) {
      return false;
    }
  }
}
