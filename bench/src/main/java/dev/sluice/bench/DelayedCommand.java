package dev.sluice.bench;

import dev.sluice.core.config.BinlogMode;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code delayed}: events scheduled evenly over the next {@code --seconds}; how late each arrives
 * at a receiver against its due time (database clock), and how many arrive early (must be none).
 */
@Command(
    name = "delayed",
    mixinStandardHelpOptions = true,
    description = {
      "Events spread over the next N seconds; lateness at the receiver and early count.",
      "Ends with: delayed: events=.. early=.. p50_ms=.. p99_ms=.."
    })
final class DelayedCommand implements Callable<Integer> {
  @Mixin ServerOptions serverOptions;

  @Option(
      names = "--queue-options",
      defaultValue = "",
      description =
          "Queue options replacing the defaults, e.g. 'poll_interval=10ms' (default: "
              + SluiceSide.COMMENT
              + ")")
  String queueOptions;

  @Option(
      names = "--seconds",
      defaultValue = "60",
      description = "Spread of due times. Default: ${DEFAULT-VALUE}")
  double seconds;

  @Option(
      names = "--binlog",
      defaultValue = "auto",
      description =
          "auto: the manager follows the server's binlog; off: it polls alone. Default:"
              + " ${DEFAULT-VALUE}")
  String binlog;

  @Option(names = "--events", description = "Default: 1,000 per second of --seconds")
  Long events;

  @Option(
      names = "--lead-ms",
      defaultValue = "5000",
      description =
          "Delay of the first event after its insert; covers the load. Default: ${DEFAULT-VALUE}")
  long leadMs;

  @Option(
      names = "--warmup-events",
      defaultValue = "5000",
      description =
          "Events due at once, delivered and not measured before the load (JIT, connections)."
              + " Default: ${DEFAULT-VALUE}")
  long warmupEvents;

  @Option(names = "--receivers", defaultValue = "4", description = "Default: ${DEFAULT-VALUE}")
  int receivers;

  @Option(
      names = "--concurrency",
      defaultValue = "4",
      description = "Handler threads per receiver. Default: ${DEFAULT-VALUE}")
  int concurrency;

  @Option(
      names = "--max-in-flight",
      defaultValue = "64",
      description = "Credits per receiver. Default: ${DEFAULT-VALUE}")
  int maxInFlight;

  @Override
  public Integer call() throws Exception {
    SluiceSide.useOptions(queueOptions);
    SluiceSide.useBinlog(BinlogMode.parse("bench", binlog));
    long n = events != null ? events : Math.round(1000 * seconds);
    Latencies lat = new Latencies();
    try (BenchServer server = BenchServer.of(serverOptions)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      Progress.note(
          String.format(
              Locale.ROOT,
              "delayed: %,d events due evenly from %d ms to %d ms after their insert; %d receivers"
                  + " x %d threads, %d credits, queue '%s'",
              n,
              leadMs,
              leadMs + Math.round(seconds * 1000),
              receivers,
              concurrency,
              maxInFlight,
              SluiceSide.COMMENT));
      Database db = server.createDatabase("bench_delayed");
      try (SluiceSide s = new SluiceSide(db)) {
        s.createQueue();
        s.startManager(10);
        s.startReceivers(
            receivers, concurrency, maxInFlight, due -> lat.record(due, Latencies.wallNanos()));
        if (warmupEvents > 0) {
          lat.recording(false);
          s.insertDueNow(warmupEvents, x -> {});
          long until = System.nanoTime() + 60_000_000_000L;
          while (lat.count() < warmupEvents && System.nanoTime() < until) {
            Thread.sleep(10);
          }
          Progress.note(
              String.format(
                  Locale.ROOT, "delayed: warm-up: %,d events due now delivered", lat.count()));
          lat.recording(true);
        }
        long warm = lat.count();
        long spacing = Math.round(seconds * 1e9 / n);
        DrainCommand.load("delayed", n, p -> s.insertRows(n, leadMs * 1_000_000L, spacing, p));
        long deadline = System.nanoTime() + (long) ((seconds + leadMs / 1000.0 + 60) * 1e9);
        try (Progress p =
            Progress.start(
                "delayed",
                () -> {
                  Histogram h = lat.interval();
                  return String.format(
                      Locale.ROOT,
                      "delivered=%,d/%,d early=%d last-second p50=%sms p99=%sms max=%sms",
                      lat.count() - warm,
                      n,
                      lat.early(),
                      SteadyCommand.fmt(Latencies.ms(h, 50)),
                      SteadyCommand.fmt(Latencies.ms(h, 99)),
                      SteadyCommand.fmt(Latencies.ms(h, 100)));
                })) {
          while (lat.count() - warm < n) {
            if (System.nanoTime() > deadline) {
              throw new IllegalStateException(
                  "only " + (lat.count() - warm) + " of " + n + " events delivered in time");
            }
            Thread.sleep(10);
          }
        }
        Progress.note(s.timerSummary("sluice.due.to.dispatch"));
        s.stopReceivers();
      } finally {
        server.drop(db);
      }
    }
    Histogram h = lat.snapshot();
    Progress.note(
        String.format(
            Locale.ROOT,
            "delayed: lateness p50=%sms p90=%sms p99=%sms p99.9=%sms max=%sms",
            SteadyCommand.fmt(Latencies.ms(h, 50)),
            SteadyCommand.fmt(Latencies.ms(h, 90)),
            SteadyCommand.fmt(Latencies.ms(h, 99)),
            SteadyCommand.fmt(Latencies.ms(h, 99.9)),
            SteadyCommand.fmt(Latencies.ms(h, 100))));
    Machine.noteEnd();
    System.out.println(
        String.format(
            Locale.ROOT,
            "delayed: events=%d early=%d p50_ms=%s p99_ms=%s",
            h.getTotalCount(),
            lat.early(),
            SteadyCommand.fmt(Latencies.ms(h, 50)),
            SteadyCommand.fmt(Latencies.ms(h, 99))));
    return lat.early() == 0 ? 0 : 1;
  }
}
