package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One receiver process of a client, started as the contract says: its command, from the
 * repository's root, with the {@code SLUICE_*} environment. What it prints on stdout is parsed as
 * it comes, one JSON object per line, by a reader thread of its own (lines that are not JSON
 * objects are kept apart: the contract allows none); stderr goes to a log file under {@code
 * target/}.
 */
final class ReceiverProcess implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String name;
  private final Process process;
  private final Path log;
  private final List<JsonNode> lines = new CopyOnWriteArrayList<>();
  private final List<String> garbage = new CopyOnWriteArrayList<>();
  private final CountDownLatch eof = new CountDownLatch(1); // stdout read to its end

  private ReceiverProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
    Thread reader = new Thread(this::read, "conformance-stdout-" + name);
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts {@code client}'s receiver with {@code env} (the contract's variables) added. */
  static ReceiverProcess start(Client client, String name, Map<String, String> env) {
    Path dir = Path.of("target", "conformance", client.id());
    try {
      Files.createDirectories(dir);
      Path log = dir.resolve(name + "-" + System.nanoTime() + ".stderr.log");
      ProcessBuilder b =
          new ProcessBuilder(client.command().toString())
              .directory(Client.root().toFile())
              .redirectError(log.toFile());
      // Nothing of the suite's own environment that the contract names leaks in.
      b.environment().keySet().removeIf(k -> k.startsWith("SLUICE_"));
      b.environment().put("JAVA_HOME", System.getProperty("java.home"));
      b.environment().putAll(env);
      return new ReceiverProcess(client.id() + " receiver " + name, b.start(), log);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + client.command(), e);
    }
  }

  /** The contract's variables for one process; the check names its receiver id. */
  static Map<String, String> env(
      Client client,
      List<String> targets,
      String queue,
      String check,
      int maxInFlight,
      String mode) {
    Map<String, String> env = new HashMap<>();
    env.put("SLUICE_TARGETS", String.join(",", targets));
    env.put("SLUICE_QUEUE", queue);
    env.put("SLUICE_RECEIVER_ID", check + "-" + client.id());
    env.put("SLUICE_MAX_IN_FLIGHT", Integer.toString(maxInFlight));
    env.put("SLUICE_MODE", mode);
    return env;
  }

  private void read() {
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        try {
          JsonNode node = JSON.readTree(line);
          if (node != null && node.isObject()) {
            lines.add(node);
            continue;
          }
        } catch (IOException notJson) {
          // kept below
        }
        garbage.add(line);
      }
    } catch (IOException e) {
      // The process ended (or was killed) while we read: its stdout is closed.
    } finally {
      eof.countDown();
    }
  }

  /** Every JSON line so far, in order. */
  List<JsonNode> lines() {
    return List.copyOf(lines);
  }

  /** The lines of one {@code type} so far. */
  List<JsonNode> lines(String type) {
    return lines.stream().filter(l -> type.equals(l.path("type").asText())).toList();
  }

  /** Lines of stdout that were not JSON objects. */
  List<String> garbage() {
    return List.copyOf(garbage);
  }

  /** Waits for {@code {"type":"ready"}}; fails at once, with where to look, if the process ends. */
  void awaitReady() {
    awaitLine("ready", l -> true, Duration.ofSeconds(90));
  }

  /** Waits until a line of {@code type} matches, failing if the process ends first. */
  void awaitLine(String type, Predicate<JsonNode> match, Duration atMost) {
    await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> lines(type).stream().anyMatch(match) || !process.isAlive());
    assertThat(lines(type).stream().anyMatch(match))
        .as("%s printed a %s line (it %s; stderr: %s)", name, type, state(), log)
        .isTrue();
  }

  /** Waits until {@code count} lines of {@code type} match, failing if the process ends first. */
  void awaitLines(String type, Predicate<JsonNode> match, long count, Duration atMost) {
    await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> lines(type).stream().filter(match).count() >= count || !process.isAlive());
    assertThat(lines(type).stream().filter(match).count())
        .as("%s lines of %s (it %s; stderr: %s)", type, name, state(), log)
        .isGreaterThanOrEqualTo(count);
  }

  /** Writes {@code stop} on stdin: the graceful stop. */
  void stop() {
    try {
      OutputStream in = process.getOutputStream();
      in.write("stop\n".getBytes(StandardCharsets.UTF_8));
      in.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(name + " does not read its stdin any more", e);
    }
  }

  /**
   * Stops it gracefully and checks the contract's end: {@code stopped} as the last line, exit 0,
   * within 10 seconds.
   */
  void stopAndAwaitExit() throws InterruptedException {
    stop();
    assertThat(process.waitFor(10, TimeUnit.SECONDS))
        .as("%s exited within 10 s of stop (stderr: %s)", name, log)
        .isTrue();
    assertThat(process.exitValue()).as("%s's exit code (stderr: %s)", name, log).isZero();
    assertThat(eof.await(5, TimeUnit.SECONDS)).as("%s's stdout ended", name).isTrue();
    List<JsonNode> all = lines();
    assertThat(all).as("%s's lines", name).isNotEmpty();
    assertThat(all.get(all.size() - 1).path("type").asText())
        .as("%s's last line (stderr: %s)", name, log)
        .isEqualTo("stopped");
  }

  /** SIGKILL, to the process and whatever it started: nothing of it may answer after this. */
  void kill() {
    List<ProcessHandle> children = process.descendants().toList();
    process.destroyForcibly();
    children.forEach(ProcessHandle::destroyForcibly);
    boolean died;
    try {
      died = process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing " + name, e);
    }
    assertThat(died).as("%s died of SIGKILL", name).isTrue();
  }

  boolean alive() {
    return process.isAlive();
  }

  /** For messages: the process's name and its stderr log. */
  String describe() {
    return name + " (stderr: " + log + ")";
  }

  private String state() {
    return process.isAlive() ? "is running" : "exited with " + process.exitValue();
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      kill();
    }
  }
}
