package dev.sluice.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.examples.SluiceMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * {@code sluice demo --poison} in-process on the embedded MariaDB, through the real command line:
 * every fault is injected while the demo's orders flow, and each must be contained, with no queue
 * stalled and nothing lost or early.
 */
class PoisonDemoTest {
  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void everyFaultIsContained() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = SluiceMain.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));

    int code = cl.execute("demo", "--poison", "--rate", "20", "--seed", "11");

    List<String> lines = out.toString().lines().toList();
    List<String> verdicts = lines.stream().filter(l -> l.startsWith("poison: ")).toList();
    String report = String.join("\n", verdicts);
    assertThat(lines).as("stdout:%n%s%nstderr:%n%s", out, err).hasSizeGreaterThan(2);
    String last = lines.get(lines.size() - 1);
    String summary = lines.get(lines.size() - 2);
    // Every fault was tried (the same thirteen each run), and each got a verdict line.
    assertThat(verdicts).filteredOn(l -> l.matches("poison: fault \\d+ .*")).hasSize(13);
    assertThat(summary)
        .as("the demo's summary line; poison report:%n%s", report)
        .matches(
            "demo: committed=\\d+ cancelled=\\d+ delivered=\\d+ dead=\\d+ rolled_back_fired=0"
                + " cancelled_fired=0 early=0 duplicates=\\d+ lost=0");
    assertThat(last)
        .as("poison report:%n%s", report)
        .isEqualTo("poison: tried=13 contained=13 stalled_queues=0 lost=0 early=0");
    assertThat(code).as("exit code; poison report:%n%s", report).isZero();
  }
}
