package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A receiver client under test: the command that starts its receiver process (relative to the
 * repository's root) and what it needs installed. The property {@code conformance.clients} (say
 * {@code -Dconformance.clients=node}, or the environment variable {@code
 * SLUICE_CONFORMANCE_CLIENTS}, as {@code .ci/run} sets it) picks the clients to check; unset, every
 * one is, and a client whose runtime is missing has its checks skipped with the command that
 * installs it. A client named there whose runtime is missing fails instead: asked for, it must run.
 */
enum Client {
  JAVA("java", "conformance/receivers/java", "./mvnw -pl conformance -am package -DskipTests"),
  NODE("node", "clients/node/conformance/receiver", "cd clients/node && npm ci"),
  PYTHON(
      "python",
      "clients/python/conformance/receiver",
      "apt-get install python3-grpcio python3-protobuf protobuf-compiler-grpc python3-pymysql");

  static final String PROPERTY = "conformance.clients";

  private final String id;
  private final String command;
  private final String install;

  Client(String id, String command, String install) {
    this.id = id;
    this.command = command;
    this.install = install;
  }

  String id() {
    return id;
  }

  /** The receiver process's command, an executable under the repository's root. */
  Path command() {
    return root().resolve(command);
  }

  /**
   * Why this client's checks are skipped: not selected, or its runtime is missing (with the command
   * that installs it); null when they run. Fails when the client was named in {@value #PROPERTY}
   * but cannot run: asked for, it must not pass by being skipped.
   */
  String skipReason() {
    List<String> named = selected();
    if (!named.isEmpty() && !named.contains(id)) {
      return id + " receiver: not selected (" + PROPERTY + "=" + String.join(",", named) + ")";
    }
    String missing = missing();
    if (missing == null) {
      return null;
    }
    String message = id + " receiver cannot run: " + missing + "; install it with: " + install;
    if (named.contains(id)) {
      fail(message + " (named in " + PROPERTY + " or " + ENV + ", so not skipped)");
    }
    return message;
  }

  /** What is missing to run this client's receiver process, or null when nothing is. */
  private String missing() {
    Path root = root();
    switch (this) {
      case JAVA -> {
        if (!Files.exists(root.resolve("conformance/target/receiver.classpath"))) {
          return "conformance/target/receiver.classpath was not written by the build";
        }
      }
      case NODE -> {
        if (!runs("node", "--version")) {
          return "no node on the PATH";
        }
        if (!Files.isDirectory(root.resolve("clients/node/node_modules"))) {
          return "clients/node/node_modules is missing";
        }
      }
      case PYTHON -> {
        // The interpreters its launcher tries, in its order: SLUICE_PYTHON, Debian's, the PATH's.
        String set = System.getenv("SLUICE_PYTHON");
        List<String> tried =
            set != null && !set.isBlank() ? List.of(set) : List.of("/usr/bin/python3", "python3");
        if (tried.stream().noneMatch(py -> runs(py, "-c", "import grpc, google.protobuf"))) {
          return "no python3 that can import grpc and google.protobuf (tried "
              + String.join(", ", tried)
              + ")";
        }
      }
    }
    if (!Files.isExecutable(command())) {
      return command + " is not in this checkout (or not executable)";
    }
    return null;
  }

  private static boolean runs(String... command) {
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return false;
      }
      return p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The environment variable that names them when the property is unset (CI sets it). */
  static final String ENV = "SLUICE_CONFORMANCE_CLIENTS";

  /**
   * The clients named in {@value #PROPERTY}, else in {@value #ENV}; empty when both are unset or
   * blank.
   */
  static List<String> selected() {
    String v = System.getProperty(PROPERTY, "");
    if (v.isBlank()) {
      v = System.getenv().getOrDefault(ENV, "");
    }
    List<String> named =
        Arrays.stream(v.split(","))
            .map(s -> s.strip().toLowerCase(Locale.ROOT))
            .filter(s -> !s.isEmpty())
            .toList();
    for (String n : named) {
      if (Arrays.stream(values()).noneMatch(c -> c.id.equals(n))) {
        throw new IllegalArgumentException(
            PROPERTY + " names an unknown client '" + n + "' (known: java, node, python)");
      }
    }
    return named;
  }

  /** The repository's root: {@code conformance.root} as the build sets it, else found upwards. */
  static Path root() {
    String set = System.getProperty("conformance.root");
    if (set != null && !set.isBlank()) {
      return Path.of(set).toAbsolutePath().normalize();
    }
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("conformance/CONTRACT.md"))) {
        return p;
      }
    }
    throw new IllegalStateException(
        "no checkout root (conformance/CONTRACT.md) above the working dir");
  }
}
