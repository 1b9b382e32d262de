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

/** {@code sluice demo --secure}: mutual TLS and tokens, every attack denied, nothing lost. */
class SecureDemoTest {
  @Test
  @Timeout(value = 4, unit = TimeUnit.MINUTES)
  void everyAttackIsDeniedAndNothingIsLost() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = SluiceMain.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));

    int code = cl.execute("demo", "--secure", "--events", "600", "--seed", "7");

    assertThat(code).as("exit code; stderr:%n%s", err).isZero();
    List<String> lines = out.toString().lines().toList();
    String summary = lines.get(lines.size() - 1);
    assertThat(summary)
        .as("summary; stderr:%n%s", err)
        .matches(
            "demo: committed=\\d+ cancelled=\\d+ delivered=\\d+ dead=\\d+ rolled_back_fired=0"
                + " cancelled_fired=0 early=0 duplicates=\\d+ lost=0 attacks=16 denied=16");
    assertThat(err.toString()).doesNotContain("NOT DENIED").contains("attack 16:");
  }

  @Test
  void isRefusedWithSeveralManagers() {
    CommandLine cl = SluiceMain.commandLine();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(new StringWriter(), true));
    cl.setErr(new PrintWriter(err, true));
    assertThat(cl.execute("demo", "--secure", "--managers", "2")).isEqualTo(2);
    assertThat(err.toString()).contains("--secure runs with one shard");
  }
}
