package dev.sluice.examples.demo;

import dev.sluice.testkit.FreePorts;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The demo's managers as separate OS processes, exactly as {@code sluice serve} runs in production:
 * {@code java -cp <this jar> dev.sluice.manager.cli.SluiceCli serve --config m1.yaml}, each with
 * its own manager id and gRPC port and every shard in its config. Their configs and logs are in one
 * temporary directory (printed by the demo). A manager can be killed with SIGKILL and started again
 * as a new process with the same id and port.
 */
final class DemoManagers implements AutoCloseable {
  /** The manager's defaults, written out: see the README on why these. */
  static final Duration LEASE_TTL = Duration.ofSeconds(2);

  static final Duration LEASE_RENEW = Duration.ofMillis(500);
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
  static final int MAX_MANAGERS = 8;

  /** One manager: fixed id, port and config; a new process per life. */
  static final class Manager {
    final String id;
    final int port;
    final Path config;
    final Path log;
    private volatile Process process;
    private volatile boolean killed;
    private int lives;

    Manager(String id, int port, Path config, Path log) {
      this.id = id;
      this.port = port;
      this.config = config;
      this.log = log;
    }

    String target() {
      return "127.0.0.1:" + port;
    }

    long pid() {
      Process p = process;
      return p == null ? -1 : p.pid();
    }

    /** Whether this manager's current process runs (and the demo has not just killed it). */
    boolean alive() {
      Process p = process;
      return p != null && !killed && p.isAlive();
    }
  }

  private final Path dir;
  private final Map<String, Manager> managers = new LinkedHashMap<>();
  private final Thread reaper = new Thread(this::destroyAllForcibly, "demo-managers-reaper");

  DemoManagers(List<DemoDatabase.Shard> shards, int count, Path dir) throws IOException {
    this.dir = dir;
    for (int i = 1; i <= count; i++) {
      String id = "m" + i;
      int port = freePort();
      Path config = dir.resolve(id + ".yaml");
      Files.writeString(config, yaml(id, port, shards));
      managers.put(id, new Manager(id, port, config, dir.resolve(id + ".log")));
    }
    // Should the demo's JVM exit without closing (Ctrl-C), its managers must not linger.
    Runtime.getRuntime().addShutdownHook(reaper);
  }

  /** A manager's config: its id and port, every shard with its key range, the lease timing. */
  static String yaml(String id, int port, List<DemoDatabase.Shard> shards) {
    StringBuilder y = new StringBuilder();
    y.append("manager_id: ").append(id).append('\n');
    y.append("grpc_host: 127.0.0.1\n");
    y.append("grpc_port: ").append(port).append('\n');
    y.append("http_host: 127.0.0.1\n");
    y.append("http_port: 0\n"); // several managers on one host: any free port each
    y.append("discovery_interval: 1s\n");
    y.append("shutdown_timeout: 5s\n");
    y.append("lease_ttl: ").append(LEASE_TTL.toMillis()).append("ms\n");
    y.append("lease_renew: ").append(LEASE_RENEW.toMillis()).append("ms\n");
    y.append("shards:\n");
    for (DemoDatabase.Shard s : shards) {
      y.append("  - name: ").append(s.name()).append('\n');
      y.append("    url: \"").append(s.url()).append("\"\n");
      y.append("    user: ").append(DemoDatabase.USER).append('\n');
      y.append("    password: \"").append(DemoDatabase.PASSWORD).append("\"\n");
      y.append("    key_range: \"").append(s.keyRange()).append("\"\n");
      y.append("    pool_size: 6\n");
    }
    return y.toString();
  }

  Path dir() {
    return dir;
  }

  List<Manager> all() {
    return List.copyOf(managers.values());
  }

  Manager get(String id) {
    Manager m = managers.get(id);
    if (m == null) {
      throw new IllegalArgumentException("no manager " + id);
    }
    return m;
  }

  List<String> targets() {
    return managers.values().stream().map(Manager::target).toList();
  }

  /** Whether the manager of that id is running now; false for unknown ids (and ""). */
  boolean alive(String id) {
    Manager m = managers.get(id);
    return m != null && m.alive();
  }

  /** Starts every manager and waits until each serves gRPC. */
  void startAll() throws InterruptedException {
    for (Manager m : managers.values()) {
      spawn(m);
    }
    for (Manager m : managers.values()) {
      awaitServing(m);
    }
  }

  /** SIGKILL (as kill -9): no shutdown hook runs, the lease is not given up. Waits for the exit. */
  void kill(Manager m) throws InterruptedException {
    m.killed = true;
    Process p = m.process;
    if (p != null) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  /** Starts a new process for the manager (same id, port and config) and waits until it serves. */
  void restart(Manager m) throws InterruptedException {
    spawn(m);
    awaitServing(m);
  }

  private void spawn(Manager m) {
    try {
      m.lives++;
      Files.writeString(
          m.log,
          "==== demo: " + m.id + " life " + m.lives + ", started " + Instant.now() + "\n",
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      // Small heaps, quick start-up: two managers, the demo and MariaDB share a laptop.
      cmd.addAll(List.of("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
      cmd.addAll(List.of("-cp", classPath()));
      cmd.addAll(List.of("dev.sluice.manager.cli.SluiceCli", "serve", "--config"));
      cmd.add(m.config.toString());
      Process p =
          new ProcessBuilder(cmd)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(m.log.toFile()))
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
      m.process = p;
      m.killed = false;
    } catch (IOException e) {
      throw new UncheckedIOException("could not start manager " + m.id, e);
    }
  }

  /** This JVM's class path, absolute, so the managers run exactly the code the demo runs. */
  private static String classPath() {
    List<String> parts = new ArrayList<>();
    for (String p : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!p.isEmpty()) {
        parts.add(Path.of(p).toAbsolutePath().toString());
      }
    }
    return String.join(File.pathSeparator, parts);
  }

  private void awaitServing(Manager m) throws InterruptedException {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    ManagedChannel ch = ManagedChannelBuilder.forTarget(m.target()).usePlaintext().build();
    try {
      HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(ch);
      while (System.nanoTime() < deadline) {
        Process p = m.process;
        if (p == null || !p.isAlive()) {
          throw new IllegalStateException(
              "manager " + m.id + " exited at start-up (exit " + exit(p) + "); see " + m.log);
        }
        try {
          ServingStatus s =
              health
                  .withDeadlineAfter(1, TimeUnit.SECONDS)
                  .check(HealthCheckRequest.getDefaultInstance())
                  .getStatus();
          if (s == ServingStatus.SERVING) {
            return;
          }
        } catch (RuntimeException notYet) {
          ch.resetConnectBackoff();
        }
        Thread.sleep(50);
      }
      throw new IllegalStateException(
          "manager " + m.id + " did not serve within " + READY_TIMEOUT + "; see " + m.log);
    } finally {
      ch.shutdownNow();
    }
  }

  private static String exit(Process p) {
    try {
      return p == null ? "?" : String.valueOf(p.exitValue());
    } catch (IllegalThreadStateException e) {
      return "?";
    }
  }

  /** Stops every manager gracefully (SIGTERM: leases given up), then forcibly after 15 s. */
  @Override
  public void close() {
    for (Manager m : managers.values()) {
      Process p = m.process;
      if (p != null && p.isAlive()) {
        p.destroy();
      }
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    for (Manager m : managers.values()) {
      Process p = m.process;
      if (p == null) {
        continue;
      }
      try {
        long left = Math.max(0, deadline - System.nanoTime());
        if (!p.waitFor(left, TimeUnit.NANOSECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
    try {
      Runtime.getRuntime().removeShutdownHook(reaper);
    } catch (IllegalStateException shuttingDown) {
      // The hook runs anyway.
    }
  }

  private void destroyAllForcibly() {
    for (Manager m : managers.values()) {
      Process p = m.process;
      if (p != null) {
        p.destroyForcibly();
      }
    }
  }

  private static int freePort() throws IOException {
    return FreePorts.belowEphemeralRange();
  }
}
