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
 * The chaos demo, small and quick: two shards, two manager processes (real {@code sluice serve}
 * JVMs), and every chaos step on a short schedule — a manager killed with SIGKILL and restarted,
 * the server read-only for a second, the database restarted, another kill — while orders flow.
 */
class ChaosDemoTest {
  private static final Pattern SUMMARY =
      Pattern.compile(
          "demo: committed=(\\d+) cancelled=(\\d+) delivered=(\\d+) dead=(\\d+)"
              + " rolled_back_fired=0 cancelled_fired=0 early=0 duplicates=(\\d+) lost=0"
              + " failovers=(\\d+) max_failover_ms=(\\d+)");

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void chaosLosesNothing() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = SluiceMain.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));

    int code =
        cl.execute(
            "demo",
            "--events",
            "300",
            "--rate",
            "30",
            "--shards",
            "2",
            "--managers",
            "2",
            "--chaos",
            "--chaos-interval",
            "2",
            "--seed",
            "7");

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
    // Every step ran, on the progress output.
    assertThat(lines).anyMatch(l -> l.contains("chaos: kill -9 m"));
    assertThat(lines).anyMatch(l -> l.contains("chaos: SET GLOBAL read_only=1"));
    assertThat(lines).anyMatch(l -> l.contains("chaos: MariaDB back after"));
    assertThat(lines).anyMatch(l -> l.matches("\\[ *\\d+s] committed=\\d+ .* leaders=s0:.*,s1:.*"));
  }
}
