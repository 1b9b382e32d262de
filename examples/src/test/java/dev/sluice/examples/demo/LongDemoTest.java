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

/**
 * {@code sluice demo --long}, short: jobs working 4-20 s on a queue whose ack_wait is 2 s, some
 * waiting first, with the leader killed (kill -9) and a receiver killed mid-run. With automatic
 * extension no event may be delivered again while a live receiver still runs it, and none may be
 * lost; without it, both happen and the demo says so with exit code 1.
 */
class LongDemoTest {
  private static final Pattern SUMMARY =
      Pattern.compile(
          "demo: long jobs=(\\d+) finished=(\\d+) snoozes=(\\d+) extended=(\\d+) failovers=(\\d+)"
              + " receiver_kills=1 duplicates_while_running=(\\d+) lost=(\\d+)");

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void longJobsRunOnceAtATimeThroughKills() {
    Run run = run("--events", "30", "--rate", "10", "--seed", "38");

    assertThat(run.code).as("exit code; stdout:%n%s%nstderr:%n%s", run.out, run.err).isZero();
    Matcher m = run.summary();
    assertThat(m.group(2)).as("finished").isEqualTo("30");
    assertThat(Long.parseLong(m.group(3))).as("snoozes").isPositive();
    assertThat(Long.parseLong(m.group(4))).as("extended runs").isPositive();
    assertThat(Long.parseLong(m.group(5))).as("failovers").isPositive();
    assertThat(m.group(6)).as("duplicates_while_running").isEqualTo("0");
    assertThat(m.group(7)).as("lost").isEqualTo("0");
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void withoutAutomaticExtensionTheDemoFails() {
    // Not waiting for the jobs to go dead: the duplicates come within the first ack_wait or two.
    Run run =
        run("--events", "9", "--rate", "10", "--seed", "39", "--timeout", "6", "--no-auto-extend");

    assertThat(run.code).as("exit code; stdout:%n%s%nstderr:%n%s", run.out, run.err).isEqualTo(1);
    Matcher m = run.summary();
    assertThat(Long.parseLong(m.group(6))).as("duplicates_while_running").isPositive();
  }

  @Test
  void longIsRefusedWithTheDemosItDoesNotRunWith() {
    CommandLine cl = SluiceMain.commandLine();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(new StringWriter(), true));
    cl.setErr(new PrintWriter(err, true));
    assertThat(cl.execute("demo", "--long", "--groups")).isEqualTo(2);
    assertThat(cl.execute("demo", "--no-auto-extend")).isEqualTo(2);
    assertThat(err.toString()).contains("--long runs on one shard", "--no-auto-extend goes with");
  }

  private record Run(int code, String out, String err) {
    Matcher summary() {
      List<String> lines = out.lines().toList();
      String last = lines.get(lines.size() - 1);
      Matcher m = SUMMARY.matcher(last);
      assertThat(m.matches()).as("summary line: %s%nstderr:%n%s", last, err).isTrue();
      return m;
    }
  }

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = SluiceMain.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of("demo", "--long"));
    if (!java.util.List.of(args).contains("--timeout")) {
      all.addAll(java.util.List.of("--timeout", "90"));
    }
    all.addAll(java.util.List.of(args));
    int code = cl.execute(all.toArray(String[]::new));
    return new Run(code, out.toString(), err.toString());
  }
}
