package dev.sluice.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.examples.SluiceMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * {@code sluice demo --outlet kafka|rabbitmq}: the queue publishes to an in-process broker that is
 * stopped for a while mid-run; a broker consumer sees every committed event, none early.
 */
class OutletDemoTest {
  @ParameterizedTest
  @ValueSource(strings = {"kafka", "rabbitmq"})
  @Timeout(value = 4, unit = TimeUnit.MINUTES)
  void nothingIsLostOrEarlyThroughABrokerThatGoesDown(String kind) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = SluiceMain.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));

    int code = cl.execute("demo", "--outlet", kind, "--events", "800", "--seed", "11");

    assertThat(code).as("exit code; stderr:%n%s", err).isZero();
    List<String> lines = out.toString().lines().toList();
    String summary = lines.get(lines.size() - 1);
    assertThat(summary)
        .as("summary; stderr:%n%s", err)
        .matches(
            "demo: committed=\\d+ cancelled=\\d+ delivered=\\d+ dead=0 rolled_back_fired=0"
                + " cancelled_fired=0 early=0 duplicates=\\d+ lost=0 outlet="
                + kind
                + " consumed=\\d+ broker_outage_ms=\\d+");
    assertThat(out.toString()).contains("broker stopped").contains("broker back after");
  }

  @Test
  void isRefusedForAnUnknownKind() {
    CommandLine cl = SluiceMain.commandLine();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(new StringWriter(), true));
    cl.setErr(new PrintWriter(err, true));
    assertThat(cl.execute("demo", "--outlet", "nats")).isEqualTo(2);
    assertThat(err.toString()).contains("--outlet must be kafka or rabbitmq, was 'nats'");
  }
}
