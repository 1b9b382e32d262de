package dev.sluice.bench;

import dev.sluice.receiver.ReceivedEvent;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code extend}: what a deadline extension costs the database. Two drains of the same N events on
 * fresh databases of one server, through the real SDK: {@code plain}, whose handler acks at once,
 * and {@code extended}, whose handler first extends its event's deadline ({@link
 * ReceivedEvent#extend}) {@code --extends} times, waiting for each answer, then acks. The server's
 * statement counters ({@code SHOW GLOBAL STATUS}) over each drain give the statements each
 * extension adds: the difference of the two drains' questions, updates and commits, divided by the
 * extensions made.
 *
 * <p>Automatic extension is off in both (the handlers return at once); the extended drain's
 * handlers ask themselves, as a long handler's SDK would.
 *
 * <p>Threads: the command's own thread runs the phases; the receivers' handler threads count.
 */
@Command(
    name = "extend",
    mixinStandardHelpOptions = true,
    description = {
      "Deadline extension: statements and commits each extension costs, from SHOW GLOBAL STATUS",
      "deltas of a drain whose handlers extend each event before acking, against the same drain",
      "without; and both drains' events/s.",
      "Ends with: extend: events=N plain=X/s extended=Y/s ratio=Y/X statements_per_extension=S"
          + " updates_per_extension=U commits_per_extension=C"
    })
final class ExtendCommand implements Callable<Integer> {
  @Mixin ServerOptions serverOptions;

  @Option(
      names = "--events",
      defaultValue = "20000",
      description = "Events per drain. Default: ${DEFAULT-VALUE}")
  int events;

  @Option(
      names = "--extends",
      defaultValue = "1",
      description = "Extensions per event in the extended drain. Default: ${DEFAULT-VALUE}")
  int extendsPerEvent;

  @Option(
      names = "--receivers",
      defaultValue = "4",
      description = "Receivers. Default: ${DEFAULT-VALUE}")
  int receivers;

  @Option(
      names = "--concurrency",
      defaultValue = "16",
      description = "Handler threads per receiver. Default: ${DEFAULT-VALUE}")
  int concurrency;

  @Option(
      names = "--max-in-flight",
      defaultValue = "200",
      description = "Credits per receiver. Default: ${DEFAULT-VALUE}")
  int maxInFlight;

  @Option(
      names = "--timeout",
      defaultValue = "600",
      description = "Seconds a drain may take. Default: ${DEFAULT-VALUE}")
  int timeoutSeconds;

  /** One drain's figures. */
  private record Drain(double perSecond, ServerStatus.Delta delta, long extensions) {}

  @Override
  public Integer call() throws Exception {
    if (events < 1 || extendsPerEvent < 1) {
      throw new IllegalArgumentException("--events and --extends must be at least 1");
    }
    try (BenchServer server = BenchServer.of(serverOptions)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      Drain plain = drain(server, false);
      Drain extended = drain(server, true);
      double n = Math.max(1, extended.extensions());
      long questions = extended.delta().questions() - plain.delta().questions();
      long updates = extended.delta().get("Com_update") - plain.delta().get("Com_update");
      long commits = extended.delta().get("Com_commit") - plain.delta().get("Com_commit");
      Progress.note("plain per event: " + plain.delta().perEvent(events));
      Progress.note("extended per event: " + extended.delta().perEvent(events));
      System.out.println(
          String.format(
              Locale.ROOT,
              "extend: events=%d plain=%.0f/s extended=%.0f/s ratio=%.2f"
                  + " statements_per_extension=%.2f updates_per_extension=%.2f"
                  + " commits_per_extension=%.2f",
              events,
              plain.perSecond(),
              extended.perSecond(),
              extended.perSecond() / Math.max(1e-9, plain.perSecond()),
              questions / n,
              updates / n,
              commits / n));
    }
    return 0;
  }

  private Drain drain(BenchServer server, boolean extend) throws Exception {
    String phase = extend ? "extended" : "plain";
    Database db = server.createDatabase("bench_extend_" + phase);
    AtomicLong handled = new AtomicLong();
    AtomicLong extensions = new AtomicLong();
    AtomicLong refused = new AtomicLong();
    try (SluiceSide side = new SluiceSide(db);
        ServerStatus status = new ServerStatus(server)) {
      side.createQueue();
      ClientsCommand.insert(db, events);
      side.startManager(8);
      side.setPaused(true);
      side.startHandlers(
          receivers,
          concurrency,
          maxInFlight,
          e -> {
            if (extend) {
              for (int i = 0; i < extendsPerEvent; i++) {
                try {
                  e.extend(Duration.ofSeconds(30)).get();
                  extensions.incrementAndGet();
                } catch (java.util.concurrent.ExecutionException x) {
                  refused.incrementAndGet();
                }
              }
            }
            handled.incrementAndGet();
          });
      var acked = side.counterOf("sluice.events.acked");
      var before = status.read();
      long start = System.nanoTime();
      side.setPaused(false);
      try (Progress p =
          Progress.start(phase, () -> String.format(Locale.ROOT, "%.0f acked", acked.count()))) {
        Await.until(phase + " drain", timeoutSeconds, 20, () -> acked.count() >= events);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      ServerStatus.Delta d = ServerStatus.Delta.between(before, status.read());
      if (refused.get() > 0) {
        Progress.note(phase + ": " + refused.get() + " extensions refused");
      }
      return new Drain(events / seconds, d, extensions.get());
    } finally {
      server.drop(db);
    }
  }
}
