package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.FreePorts;
import dev.sluice.testkit.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A manager in a process of its own ({@code sluice serve}, from this JVM's class path): the one
 * manager the suite can stop without notice, with SIGKILL, so that it neither gives up its lease
 * nor ends its streams.
 */
final class ManagerProcess implements AutoCloseable {
  private final Process process;
  private final int port;

  private ManagerProcess(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Starts manager {@code id} over {@code db}'s shard with the given lease timing. */
  static ManagerProcess start(String id, TestDatabase db, Duration ttl, Duration renew) {
    try {
      int port = FreePorts.belowEphemeralRange();
      Path dir = Files.createDirectories(Path.of("target", "conformance"));
      Path config = dir.resolve(id + "-" + System.nanoTime() + ".yaml");
      Files.writeString(
          config,
          "manager_id: "
              + id
              + "\ngrpc_host: 127.0.0.1\ngrpc_port: "
              + port
              + "\nhttp_host: 127.0.0.1\nhttp_port: 0\ndiscovery_interval: 300ms\nlease_ttl: "
              + ttl.toMillis()
              + "ms\nlease_renew: "
              + renew.toMillis()
              + "ms\nshards:\n  - name: "
              + Managers.SHARD
              + "\n    url: \""
              + db.url()
              + "\"\n"
              + (db.user() == null ? "" : "    user: " + db.user() + "\n    password: \"\"\n"));
      Process p =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-XX:+UseSerialGC",
                  "-XX:TieredStopAtLevel=1",
                  "-cp",
                  System.getProperty("java.class.path"),
                  "dev.sluice.manager.cli.SluiceCli",
                  "serve",
                  "--config",
                  config.toString())
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve(id + "-" + System.nanoTime() + ".log").toFile())
              .start();
      return new ManagerProcess(p, port);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start manager " + id, e);
    }
  }

  String target() {
    return "127.0.0.1:" + port;
  }

  boolean alive() {
    return process.isAlive();
  }

  /** SIGKILL: the lease stays taken until it expires, the streams break without a status. */
  void kill() {
    process.destroyForcibly();
    boolean died;
    try {
      died = process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing the manager", e);
    }
    assertThat(died).as("the manager died of SIGKILL").isTrue();
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      kill();
    }
  }
}
