package dev.sluice.manager.docs;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.db.QueueConvention;
import dev.sluice.manager.Harness;
import dev.sluice.manager.RawReceiver;
import dev.sluice.manager.config.ChannelConfig;
import dev.sluice.proto.v1.AdminGrpc;
import dev.sluice.proto.v1.Event;
import dev.sluice.proto.v1.PauseRequest;
import dev.sluice.receiver.MicrometerReceiverMetrics;
import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.testkit.EmbeddedAmqpBroker;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The metrics reference ({@code docs/reference/metrics.md}) matches what a running manager
 * registers: a real manager on the embedded database, with a plain queue that dispatched and acked,
 * an ordered queue that halts keys, a queue bound to a channel (an in-process AMQP broker), a row
 * in an unknown state and an operator's pause, serves {@code /metrics}; every {@code sluice_*}
 * series there is in the reference's table, and every series the table names is there, but for the
 * few that a manager registers only when the first of their events happens (listed here, and said
 * so in the reference).
 */
class DocsMetricsTest {
  static final Path PAGE = Path.of("docs", "reference", "metrics.md");

  /**
   * Series registered at their first event, which this test does not cause: a worker loop's
   * unexpected error, a call refused by a manager with {@code auth:} (this one has none), a
   * receiver's deadline extension.
   */
  static final Set<String> ONLY_ONCE_IT_HAPPENS =
      Set.of(
          "sluice_loop_errors_total", "sluice_auth_denied_total", "sluice_events_extended_total");

  static final Pattern NAME = Pattern.compile("sluice_[a-z0-9_]*[a-z0-9]");

  static Harness h;
  static EmbeddedAmqpBroker broker;

  @BeforeAll
  static void start() throws Exception {
    broker = EmbeddedAmqpBroker.start();
    h = new Harness(DocsMetricsTest.class);
    h.createQueue("docs_plain", "ack_wait=30s");
    h.exec(
        QueueConvention.createTableSql(
            "docs_ordered",
            List.of(
                "`ordering_key` VARCHAR(255) NULL",
                "KEY `sluice_ordering` (`ordering_key`, `state`, `id`)"),
            "sluice_queue ordering=key ordering_on_dead=halt max_attempts=1"));
    h.createQueue("docs_sdk", "");
    h.createQueue("docs_channel", "channel=docs channel_target=ex channel_routing_key=docs");
    h.startManager(
        h.configBuilder().channel(ChannelConfig.rabbitmq("docs", broker.uri())).build(),
        Clock.systemUTC());
    RawReceiver r = h.rawReceiver("docs_plain", "docs-r", 10);
    h.exec("INSERT INTO docs_plain (order_id) VALUES (1), (2)");
    Event a = r.events.poll(10, SECONDS);
    Event b = r.events.poll(10, SECONDS);
    assertThat(b).as("two events dispatched").isNotNull();
    // An operator sets a row in flight to a state none of Sluice's: its ack counts a bad row.
    h.exec("UPDATE docs_plain SET state = 9 WHERE id = " + a.getId());
    r.ack(a);
    r.ack(b);
    await().atMost(10, SECONDS).until(() -> r.results.size() == 2);
    var admin = AdminGrpc.newBlockingStub(h.channel());
    admin.pause(PauseRequest.newBuilder().setQueue("docs_plain").build());
    admin.resume(PauseRequest.newBuilder().setQueue("docs_plain").build());
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  void everyRegisteredSeriesIsDocumentedAndEveryDocumentedOneRegistered() throws Exception {
    Set<String> documented = documented(Docs.root().resolve(PAGE));
    assertThat(documented).as("series in the table of " + PAGE).hasSizeGreaterThan(30);
    Set<String> expected = new TreeSet<>(documented);
    expected.removeAll(ONLY_ONCE_IT_HAPPENS);
    try {
      // Sampled gauges (rows by state, halted keys, open groups) appear within their period.
      await()
          .atMost(20, SECONDS)
          .ignoreExceptions()
          .until(() -> registered(scrape()).containsAll(expected));
    } catch (ConditionTimeoutException e) {
      // the assertions below name what is missing
    }
    Set<String> registered = registered(scrape());

    Set<String> undocumented = new TreeSet<>(registered);
    undocumented.removeAll(documented);
    Set<String> missing = new TreeSet<>(expected);
    missing.removeAll(registered);
    String page = Files.readString(Docs.root().resolve(PAGE)).replaceAll("\\s+", " ");
    SoftAssertions.assertSoftly(
        soft -> {
          soft.assertThat(undocumented)
              .as("series a manager registers that " + PAGE + " leaves out")
              .isEmpty();
          soft.assertThat(missing)
              .as("series " + PAGE + " names that a manager does not register")
              .isEmpty();
          for (String name : ONLY_ONCE_IT_HAPPENS) {
            soft.assertThat(documented).as("%s is in the table", name).contains(name);
            soft.assertThat(page)
                .as("the page says when %s appears", name)
                .contains("`" + name + "` appears");
          }
        });
  }

  /**
   * The receiver SDK's series, as the page lists them under {@code new MicrometerReceiverMetrics}
   * ({@code _nacks_total} short for {@code sluice_receiver_nacks_total}), are the ones it registers
   * for a receiver that handled an event, with {@code receiverStats}.
   */
  @Test
  void theReceiverSdksSeriesAreTheOnesItRegisters() throws Exception {
    String page = Files.readString(Docs.root().resolve(PAGE));
    int from = page.indexOf("- `new MicrometerReceiverMetrics(registry)`");
    int to = page.indexOf("- `new OpenTelemetryTracing", from);
    assertThat(from).as("the receiver SDK's metrics on the page").isPositive();
    String part = page.substring(from, to);
    Set<String> documented = new TreeSet<>();
    Matcher m = Pattern.compile("`(sluice_receiver)?(_[a-z0-9_]*[a-z0-9])").matcher(part);
    while (m.find()) {
      documented.add("sluice_receiver" + m.group(2).replaceAll("\\{.*", ""));
    }
    PrometheusMeterRegistry sdk = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MicrometerReceiverMetrics metrics = new MicrometerReceiverMetrics(sdk);
    SluiceReceiver receiver =
        h.closeLater(
            SluiceReceiver.builder()
                .target(h.target())
                .queue("docs_sdk")
                .receiverId("docs-sdk")
                .observer(metrics)
                .handler(e -> {})
                .build()
                .start());
    metrics.receiverStats("docs_sdk", receiver::stats);
    h.exec("INSERT INTO docs_sdk (order_id) VALUES (1)");
    await().atMost(20, SECONDS).until(() -> receiver.stats().ackOk() == 1);
    Set<String> registered = registered(sdk.scrape());
    assertThat(documented).as("the SDK's series on the page").hasSizeGreaterThan(6);
    assertThat(registered).as("what the SDK registers, against " + PAGE).isEqualTo(documented);
  }

  /** The sluice_* names in the first column of the page's metrics table, labels dropped. */
  static Set<String> documented(Path page) throws IOException {
    Set<String> out = new TreeSet<>();
    for (String line : Files.readAllLines(page)) {
      if (!line.startsWith("| `sluice_")) {
        continue;
      }
      String first = line.substring(1, line.indexOf('|', 1));
      Matcher m = NAME.matcher(first.replaceAll("\\{[^}]*}", ""));
      while (m.find()) {
        out.add(m.group());
      }
    }
    return out;
  }

  /**
   * The sluice_* families of a Prometheus scrape: a histogram's or summary's {@code _bucket},
   * {@code _count}, {@code _sum} and {@code _max} samples count as the family itself.
   */
  static Set<String> registered(String scrape) {
    Set<String> samples = new TreeSet<>();
    for (String line : scrape.split("\n")) {
      if (line.startsWith("sluice_")) {
        Matcher m = NAME.matcher(line);
        if (m.lookingAt()) {
          samples.add(m.group());
        }
      }
    }
    Set<String> out = new TreeSet<>();
    for (String s : samples) {
      String base = s.replaceFirst("_(bucket|count|sum|max)$", "");
      boolean distribution = !base.equals(s) && samples.contains(base + "_count");
      out.add(distribution ? base : s);
    }
    return out;
  }

  static String scrape() throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(h.httpBase() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return r.body();
  }
}
