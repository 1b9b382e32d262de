package dev.sluice.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * One receiver process per client language draining the same backlog: {@code --events} pending
 * events, a manager in this JVM, and the client's conformance receiver (conformance/CONTRACT.md,
 * mode {@code ack}) started from the checkout as its own process; events/s from the receiver's
 * ready line until the last row is acked, with the process's CPU time. Each language drains a
 * database of its own, one after the other, so they do not share the machine.
 *
 * <p>The receivers are the suite's, not minimal ones: each prints two JSON lines per event (to a
 * file), as the contract asks, which every language pays alike.
 */
@Command(
    name = "clients",
    mixinStandardHelpOptions = true,
    description =
        "Events/s of one receiver process per language (java, node, python) draining the same"
            + " backlog through a manager in this JVM. Run from a checkout: the receivers are the"
            + " conformance suite's (build the Java one with ./mvnw -pl conformance -am package"
            + " -DskipTests; cd clients/node && npm ci; Debian's python3-grpcio).")
final class ClientsCommand implements Callable<Integer> {
  @Mixin ServerOptions serverOptions;

  @Option(names = "--events", defaultValue = "50000", description = "Default: ${DEFAULT-VALUE}")
  int events;

  @Option(
      names = "--clients",
      defaultValue = "java,node,python",
      split = ",",
      description = "Default: ${DEFAULT-VALUE}")
  List<String> clients;

  @Option(
      names = "--max-in-flight",
      defaultValue = "256",
      description = "The credits each receiver asks for. Default: ${DEFAULT-VALUE}")
  int maxInFlight;

  @Option(
      names = "--root",
      description = "The checkout whose receivers run (default: found upwards from here)")
  Path root;

  @Option(
      names = "--timeout",
      defaultValue = "600",
      description = "Seconds a drain may take. Default: ${DEFAULT-VALUE}")
  int timeoutSeconds;

  /** Where each client's receiver process is, under the checkout's root. */
  static final Map<String, String> RECEIVERS =
      Map.of(
          "java", "conformance/receivers/java",
          "node", "clients/node/conformance/receiver",
          "python", "clients/python/conformance/receiver");

  @Override
  public Integer call() throws Exception {
    for (String c : clients) {
      if (!RECEIVERS.containsKey(c)) {
        throw new IllegalArgumentException("--clients: java, node or python, not " + c);
      }
    }
    Path checkout = root != null ? root.toAbsolutePath().normalize() : findRoot();
    List<String> results = new ArrayList<>();
    try (BenchServer server = BenchServer.of(serverOptions)) {
      Progress.note(Machine.describe());
      Progress.note("server: " + server.describe());
      for (String client : clients) {
        Database db = server.createDatabase("bench_clients_" + client);
        try (SluiceSide side = new SluiceSide(db)) {
          side.createQueue();
          insert(db, events);
          side.startManager(8);
          results.add(drain(client, checkout, side, db));
        } finally {
          server.drop(db);
        }
      }
    }
    System.out.println(String.join(" ", results));
    return 0;
  }

  /** {@code n} pending events, 2,000 to a statement. */
  static void insert(Database db, int n) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (int at = 0; at < n; at += 2000) {
        StringBuilder sql =
            new StringBuilder("INSERT INTO ").append(SluiceSide.QUEUE).append(" (payload) VALUES ");
        for (int i = at; i < Math.min(n, at + 2000); i++) {
          sql.append(i == at ? "" : ",").append("('e").append(i).append("')");
        }
        s.execute(sql.toString());
      }
    }
  }

  private String drain(String client, Path checkout, SluiceSide side, Database db)
      throws Exception {
    Path command = checkout.resolve(RECEIVERS.get(client));
    if (!Files.isExecutable(command)) {
      throw new IllegalStateException(command + " is not executable: is --root a checkout?");
    }
    Path out = Files.createTempFile("bench-" + client + "-", ".jsonl");
    Path err = Files.createTempFile("bench-" + client + "-", ".log");
    ProcessBuilder b =
        new ProcessBuilder(command.toString())
            .directory(checkout.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    b.environment().keySet().removeIf(k -> k.startsWith("SLUICE_"));
    b.environment().put("JAVA_HOME", System.getProperty("java.home"));
    b.environment().put("SLUICE_TARGETS", "127.0.0.1:" + side.port());
    b.environment().put("SLUICE_QUEUE", SluiceSide.QUEUE);
    b.environment().put("SLUICE_RECEIVER_ID", "bench-" + client);
    b.environment().put("SLUICE_MAX_IN_FLIGHT", Integer.toString(maxInFlight));
    b.environment().put("SLUICE_MODE", "ack");
    Process p = b.start();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
      // Ready: subscribed. The events are all pending already, so the drain starts at once.
      while (!Files.readString(out).contains("\"ready\"")) {
        if (!p.isAlive() || System.nanoTime() > deadline) {
          throw new IllegalStateException(
              client + " receiver never got ready; its stderr:\n" + tail(err));
        }
        Thread.sleep(20);
      }
      long t0 = System.nanoTime();
      long acked;
      try (Progress progress =
          Progress.start(client, () -> "acked=" + ackedOr(db, -1) + " of " + events)) {
        while ((acked = ackedOr(db, 0)) < events) {
          if (!p.isAlive() || System.nanoTime() > deadline) {
            throw new IllegalStateException(
                client
                    + " receiver stopped or timed out at "
                    + acked
                    + " acked; its stderr:\n"
                    + tail(err));
          }
          Thread.sleep(50);
        }
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      Duration cpu = p.info().totalCpuDuration().orElse(Duration.ZERO);
      double rate = events / seconds;
      Progress.note(
          String.format(
              Locale.ROOT,
              "%s: %d events in %.1f s = %.0f events/s; receiver process cpu %.1f s",
              client,
              events,
              seconds,
              rate,
              cpu.toMillis() / 1000.0));
      return String.format(
          Locale.ROOT, "%s=%.0f/s %s_cpu_s=%.1f", client, rate, client, cpu.toMillis() / 1000.0);
    } finally {
      try (var stdin = p.getOutputStream()) {
        stdin.write("stop\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)); // graceful stop
      } catch (IOException e) {
        // already gone
      }
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  private static long ackedOr(Database db, long otherwise) {
    try {
      return db.queryLong("SELECT COUNT(*) FROM " + SluiceSide.QUEUE + " WHERE state = 2");
    } catch (SQLException e) {
      return otherwise;
    }
  }

  private static String tail(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }

  private static Path findRoot() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("conformance/CONTRACT.md"))) {
        return p;
      }
    }
    throw new IllegalStateException(
        "no checkout (conformance/CONTRACT.md) above the working directory: run from a checkout or"
            + " give --root");
  }
}
