package dev.sluice.bench;

import dev.sluice.receiver.ReceivedEvent;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code extend}: what a deadline extension costs the database. N events are delivered through the
 * real SDK to handlers that hold them; once all N are held (nothing else moves: no fires, no acks),
 * every handler extends its event's deadline once ({@link ReceivedEvent#extend}), and the server's
 * statement counters ({@code SHOW GLOBAL STATUS}) over those seconds, less the idle manager's own
 * statements over as long (lease renewals, polls; measured just before), give the statements,
 * updates and commits per extension. Then the handlers return and the events are acked.
 *
 * <p>A drain whose handlers extend and ack at once would mix the extension's cost with the fires'
 * and acks' smaller batches at its lower speed; holding the events first keeps it apart.
 *
 * <p>Threads: the command's own thread runs the phases; the receivers' handler threads (one per
 * held event) wait on latches and count.
 */
@Command(
    name = "extend",
    mixinStandardHelpOptions = true,
    description = {
      "Deadline extension: statements, updates and commits each extension costs the database",
      "(SHOW GLOBAL STATUS deltas while N held events are each extended once, less the idle",
      "manager's own), and how long the N extensions took.",
      "Ends with: extend: events=N extensions=X seconds=T statements_per_extension=S"
          + " updates_per_extension=U commits_per_extension=C selects_per_extension=R"
    })
final class ExtendCommand implements Callable<Integer> {
  @Mixin ServerOptions serverOptions;

  @Option(
      names = "--events",
      defaultValue = "1000",
      description = "Events held and extended (one handler thread each). Default: ${DEFAULT-VALUE}")
  int events;

  @Option(
      names = "--receivers",
      defaultValue = "4",
      description = "Receivers; each holds events/receivers. Default: ${DEFAULT-VALUE}")
  int receivers;

  @Option(
      names = "--timeout",
      defaultValue = "300",
      description = "Seconds each phase may take. Default: ${DEFAULT-VALUE}")
  int timeoutSeconds;

  @Override
  public Integer call() throws Exception {
    if (events < 1 || receivers < 1 || events % receivers != 0) {
      throw new IllegalArgumentException(
          "--events must be a positive multiple of --receivers (each holds as many)");
    }
    int each = events / receivers;
    try (BenchServer server = BenchServer.of(serverOptions)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      Database db = server.createDatabase("bench_extend");
      CountDownLatch extendNow = new CountDownLatch(1);
      CountDownLatch ackNow = new CountDownLatch(1);
      AtomicLong held = new AtomicLong();
      AtomicLong extended = new AtomicLong();
      AtomicLong refused = new AtomicLong();
      try (SluiceSide side = new SluiceSide(db);
          ServerStatus status = new ServerStatus(server)) {
        side.createQueue();
        ClientsCommand.insert(db, events);
        side.startManager(8);
        side.startHandlers(
            receivers,
            each,
            each,
            e -> {
              held.incrementAndGet();
              extendNow.await();
              try {
                e.extend(Duration.ofSeconds(60)).get();
                extended.incrementAndGet();
              } catch (ExecutionException x) {
                refused.incrementAndGet();
              }
              ackNow.await();
            });
        Await.until("all events held", timeoutSeconds, 20, () -> held.get() >= events);
        // The idle manager's own statements over a second: taken off the extensions' figures.
        var idle0 = status.read();
        long idleStart = System.nanoTime();
        Thread.sleep(1000);
        ServerStatus.Delta idle = ServerStatus.Delta.between(idle0, status.read());
        double idleSeconds = (System.nanoTime() - idleStart) / 1e9;

        var before = status.read();
        long start = System.nanoTime();
        extendNow.countDown();
        try (Progress p = Progress.start("extend", () -> extended.get() + " extended")) {
          Await.until(
              "every event extended",
              timeoutSeconds,
              5,
              () -> extended.get() + refused.get() >= events);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        ServerStatus.Delta d = ServerStatus.Delta.between(before, status.read());
        ackNow.countDown();
        var acked = side.counterOf("sluice.events.acked");
        Await.until("every event acked", timeoutSeconds, 20, () -> acked.count() >= events);
        if (refused.get() > 0) {
          Progress.note(refused.get() + " extensions refused");
        }
        double scale = seconds / idleSeconds;
        double n = Math.max(1, extended.get());
        Progress.note("idle manager per second: " + idle.perEvent(Math.round(idleSeconds)));
        System.out.println(
            String.format(
                Locale.ROOT,
                "extend: events=%d extensions=%d seconds=%.2f statements_per_extension=%.2f"
                    + " updates_per_extension=%.2f commits_per_extension=%.2f"
                    + " selects_per_extension=%.2f",
                events,
                extended.get(),
                seconds,
                (d.questions() - idle.questions() * scale) / n,
                (d.get("Com_update") - idle.get("Com_update") * scale) / n,
                (d.get("Com_commit") - idle.get("Com_commit") * scale) / n,
                (d.get("Com_select") - idle.get("Com_select") * scale) / n));
      } finally {
        server.drop(db);
      }
    }
    return 0;
  }
}
