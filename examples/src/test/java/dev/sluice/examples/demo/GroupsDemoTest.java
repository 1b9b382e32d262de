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
 * {@code sluice demo --groups}, short: groups of up to 40 children over two grouped queues with
 * their completions (wait_all and fail_fast, sealed in the same transaction or a later one),
 * failing handlers, a receiver of each queue killed, two manager processes with the leader killed,
 * the server read-only and restarted; dedup keys inserted again; a schedule every second. No
 * completion may come early, be lost or be handled twice, no duplicate may be delivered, and every
 * occurrence of the schedule must be there once.
 */
class GroupsDemoTest {
  private static final Pattern SUMMARY =
      Pattern.compile(
          "demo: groups=(\\d+) completed_once=(\\d+) early_completions=0 lost=0"
              + " duplicates_inserted=(\\d+) duplicates_delivered=0 occurrences_missing=0"
              + " occurrences_doubled=0");

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void groupsCompleteOnceAndNeverEarly() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = SluiceMain.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));

    int code =
        cl.execute(
            "demo",
            "--groups",
            "--events",
            "1200",
            "--rate",
            "200",
            "--max-group",
            "40",
            "--chaos-interval",
            "1.5",
            "--timeout",
            "60",
            "--seed",
            "22");

    assertThat(code).as("exit code; stdout:%n%s%nstderr:%n%s", out, err).isZero();
    List<String> lines = out.toString().lines().toList();
    String last = lines.get(lines.size() - 1);
    Matcher m = SUMMARY.matcher(last);
    assertThat(m.matches()).as("summary line: %s%nstderr:%n%s", last, err).isTrue();
    long groups = Long.parseLong(m.group(1));
    assertThat(groups).as("groups").isPositive();
    assertThat(Long.parseLong(m.group(2))).as("completed_once").isEqualTo(groups);
    assertThat(Long.parseLong(m.group(3))).as("duplicates_inserted").isPositive();
    assertThat(lines).anyMatch(l -> l.contains("chaos: kill -9 m"));
  }

  @Test
  void groupsIsRefusedWithTheDemosItDoesNotRunWith() {
    CommandLine cl = SluiceMain.commandLine();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(new StringWriter(), true));
    cl.setErr(new PrintWriter(err, true));
    assertThat(cl.execute("demo", "--groups", "--ordered")).isEqualTo(2);
    assertThat(cl.execute("demo", "--groups", "--max-group", "0")).isEqualTo(2);
    assertThat(err.toString()).contains("--groups runs on one shard", "--max-group must be");
  }
}
