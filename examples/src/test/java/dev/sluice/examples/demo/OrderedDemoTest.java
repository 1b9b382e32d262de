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
 * {@code sluice demo --ordered} in-process, through the real command line: a queue ordered by key,
 * few keys so that each builds a backlog, handler failures and a receiver killed mid-run; no key's
 * events may be handled two at a time or out of order, and nothing may be lost.
 */
class OrderedDemoTest {
  private static final Pattern SUMMARY =
      Pattern.compile(
          "demo: committed=(\\d+) cancelled=(\\d+) delivered=(\\d+) dead=(\\d+)"
              + " rolled_back_fired=0 cancelled_fired=0 early=0 duplicates=(\\d+) lost=0"
              + " keys=(\\d+) order_violations=0 max_in_flight_per_key=1");

  @Test
  @Timeout(value = 4, unit = TimeUnit.MINUTES)
  void keysAreHandledOneAtATimeInOrder() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = SluiceMain.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));

    int code =
        cl.execute(
            "demo",
            "--ordered",
            "--keys",
            "20",
            "--events",
            "500",
            "--rate",
            "125",
            "--seed",
            "21");

    assertThat(code).as("exit code; stdout:%n%s%nstderr:%n%s", out, err).isZero();
    List<String> lines = out.toString().lines().toList();
    String last = lines.get(lines.size() - 1);
    Matcher m = SUMMARY.matcher(last);
    assertThat(m.matches()).as("summary line: %s%nstderr:%n%s", last, err).isTrue();
    long committed = Long.parseLong(m.group(1));
    long cancelled = Long.parseLong(m.group(2));
    long delivered = Long.parseLong(m.group(3));
    long dead = Long.parseLong(m.group(4));
    assertThat(delivered + dead + cancelled).isEqualTo(committed);
    assertThat(Long.parseLong(m.group(6))).as("keys").isEqualTo(20);
  }

  @Test
  void orderedIsRefusedWithTheDemosItDoesNotRunWith() {
    CommandLine cl = SluiceMain.commandLine();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(new StringWriter(), true));
    cl.setErr(new PrintWriter(err, true));
    assertThat(cl.execute("demo", "--ordered", "--poison")).isEqualTo(2);
    assertThat(cl.execute("demo", "--ordered", "--keys", "0")).isEqualTo(2);
    assertThat(err.toString()).contains("--ordered runs with", "--keys must be");
  }
}
