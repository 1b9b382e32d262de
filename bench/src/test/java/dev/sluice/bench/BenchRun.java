package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A bench command run in this JVM as {@code bench/run} runs it (on the tests' server when {@code
 * SLUICE_TEST_JDBC_URL} names one), its output captured and echoed: what the smoke tests check.
 */
record BenchRun(String printed) {

  /** Runs {@code args}, asserts the exit code is zero, and returns what the command printed. */
  static BenchRun of(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    String external = System.getenv(TestDatabases.ENV_URL);
    if (external != null && !external.isBlank()) {
      all.addAll(List.of("--jdbc-url", external.trim()));
    }
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out = System.out;
    int code;
    try {
      System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
      code = BenchMain.run(all.toArray(String[]::new));
    } finally {
      System.setOut(out);
    }
    String printed = buf.toString(StandardCharsets.UTF_8);
    out.print(printed);
    assertThat(code).as("exit code of %s", all).isZero();
    return new BenchRun(printed);
  }

  /** The last line printed: the command's figures. */
  String lastLine() {
    List<String> lines = printed.lines().toList();
    return lines.get(lines.size() - 1);
  }
}
