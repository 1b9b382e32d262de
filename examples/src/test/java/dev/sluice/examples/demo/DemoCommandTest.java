package dev.sluice.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.examples.SluiceMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** Runs the whole demo in-process, on the embedded MariaDB, through the real command line. */
class DemoCommandTest {
  private static final Pattern SUMMARY =
      Pattern.compile(
          "demo: committed=(\\d+) cancelled=(\\d+) delivered=(\\d+) dead=(\\d+)"
              + " rolled_back_fired=0 cancelled_fired=0 early=0 duplicates=(\\d+) lost=0");

  @Test
  @Timeout(value = 4, unit = TimeUnit.MINUTES)
  void smallDemoKeepsEveryPromise() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = SluiceMain.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));

    int code = cl.execute("demo", "--events", "300", "--seed", "42");

    assertThat(code).as("exit code; stderr:%n%s", err).isZero();
    List<String> lines = out.toString().lines().toList();
    List<String> summaries = lines.stream().filter(l -> l.startsWith("demo:")).toList();
    assertThat(summaries).hasSize(1);
    assertThat(lines.get(lines.size() - 1)).isEqualTo(summaries.get(0));
    Matcher m = SUMMARY.matcher(summaries.get(0));
    assertThat(m.matches()).as("summary line: %s", summaries.get(0)).isTrue();

    long committed = Long.parseLong(m.group(1));
    long cancelled = Long.parseLong(m.group(2));
    long delivered = Long.parseLong(m.group(3));
    long dead = Long.parseLong(m.group(4));
    // About 10% roll back on purpose; the rest commit, and each ends exactly one way.
    assertThat(committed).isBetween(200L, 299L);
    assertThat(delivered + dead + cancelled).isEqualTo(committed);
    assertThat(lines).anyMatch(l -> l.matches("\\[ *\\d+s] committed=\\d+ rolled_back=\\d+ .*"));
    // Just before the summary: where the status page (with this demo's queue, live) was.
    List<String> errLines = err.toString().lines().toList();
    assertThat(errLines.get(errLines.size() - 1))
        .as("stderr's last line")
        .matches("demo: status page http://127\\.0\\.0\\.1:\\d+/ \\(while the demo runs.*\\)");
  }

  @Test
  void rejectsTooFewEvents() {
    CommandLine cl = SluiceMain.commandLine();
    cl.setOut(new PrintWriter(new StringWriter(), true));
    cl.setErr(new PrintWriter(new StringWriter(), true));
    assertThat(cl.execute("demo", "--events", "1")).isEqualTo(2);
  }
}
