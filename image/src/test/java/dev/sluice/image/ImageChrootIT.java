package dev.sluice.image;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.testkit.FreePorts;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Runs the image as a container runtime would, without one: the layers of target/jib-image.tar
 * unpacked into a root file system, /proc mounted and the few device nodes a JVM opens, then the
 * image's entrypoint started by {@code chroot --userspec=<the image's user>} with the image's
 * environment and a config file, against a real database. Checks that /healthz, /readyz and
 * /metrics answer on the HTTP port and that SIGTERM stops the manager gracefully.
 *
 * <p>Needs root (for chroot, mount and mknod) and Linux; skipped otherwise, saying why. Runs in the
 * integration-test phase, after {@code package} built the image.
 */
class ImageChrootIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void managerImageServesAndStopsOnSigterm() throws Exception {
    Path tar = Path.of(System.getProperty("sluice.image.tar", "target/jib-image.tar"));
    assumeTrue(
        System.getProperty("os.name").toLowerCase().contains("linux"),
        "image chroot test skipped: needs Linux");
    assumeTrue(Files.isRegularFile(tar), "image chroot test skipped: no image at " + tar);
    assumeTrue(isRoot(), "image chroot test skipped: needs root (chroot, mount, mknod)");
    assumeTrue(onPath("chroot"), "image chroot test skipped: no chroot command on PATH");
    assumeTrue(onPath("mount"), "image chroot test skipped: no mount command on PATH");

    Path work = Path.of("target", "image-it").toAbsolutePath();
    Path unpacked = work.resolve("image");
    Path rootfs = work.resolve("rootfs");
    unmountQuietly(rootfs.resolve("proc"));
    run("rm", "-rf", "--one-file-system", work.toString());
    Files.createDirectories(unpacked);
    Files.createDirectories(rootfs);

    // The image as `docker save` would give it: manifest.json, the config, one tar per layer.
    run("tar", "-xf", tar.toAbsolutePath().toString(), "-C", unpacked.toString());
    JsonNode manifest = JSON.readTree(unpacked.resolve("manifest.json").toFile()).get(0);
    JsonNode config =
        JSON.readTree(unpacked.resolve(manifest.get("Config").asText()).toFile()).get("config");
    for (JsonNode layer : manifest.get("Layers")) {
      run("tar", "-xf", unpacked.resolve(layer.asText()).toString(), "-C", rootfs.toString());
    }

    String user = config.path("User").asText();
    assertThat(user).as("the image's user").isNotEmpty().doesNotStartWith("0").isNotEqualTo("root");
    assertThat(config.path("ExposedPorts").has("7470/tcp")).isTrue();
    assertThat(config.path("ExposedPorts").has("7471/tcp")).isTrue();
    assertThat(config.path("Labels").path("dev.sluice.probe.readiness").asText())
        .isEqualTo("/readyz");
    List<String> command = new ArrayList<>();
    config.path("Entrypoint").forEach(a -> command.add(a.asText()));
    config.path("Cmd").forEach(a -> command.add(a.asText()));
    assertThat(command).as("entrypoint").contains("serve");

    int grpcPort = freePort();
    int httpPort = freePort();
    TestDatabase db = TestDatabases.fresh(ImageChrootIT.class);
    Path etc = rootfs.resolve("etc/sluice");
    Files.createDirectories(etc);
    Files.writeString(
        etc.resolve("sluice.yaml"),
        "manager_id: image-it\n"
            + ("grpc_port: " + grpcPort + "\n")
            + ("http_port: " + httpPort + "\n")
            + "shutdown_timeout: 4s\n"
            + "shards:\n"
            + "  - name: main\n"
            + ("    url: \"" + db.url() + "\"\n")
            // A URL that carries its credentials (SLUICE_TEST_JDBC_URL) gets no user or password.
            + (db.user() == null ? "" : "    user: \"" + db.user() + "\"\n")
            + (db.password() == null ? "" : "    password: \"" + db.password() + "\"\n"),
        StandardCharsets.UTF_8);

    // What a container runtime provides: /proc (the JVM reads it, and the loader resolves the
    // runtime's $ORIGIN through /proc/self/exe), /dev/null and the random devices, /etc/hosts.
    // A root without the capabilities for them (a container without CAP_SYS_ADMIN or CAP_MKNOD)
    // skips the test rather than failing it.
    Path dev = rootfs.resolve("dev");
    Files.createDirectories(dev);
    String mknod =
        attempt(
            List.of("mknod", "-m", "666", dev.resolve("null").toString(), "c", "1", "3"),
            List.of("mknod", "-m", "666", dev.resolve("zero").toString(), "c", "1", "5"),
            List.of("mknod", "-m", "666", dev.resolve("random").toString(), "c", "1", "8"),
            List.of("mknod", "-m", "666", dev.resolve("urandom").toString(), "c", "1", "9"));
    assumeTrue(mknod == null, "image chroot test skipped: cannot create device nodes: " + mknod);
    Files.writeString(
        rootfs.resolve("etc/hosts"),
        "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n127.0.1.1\t"
            + java.net.InetAddress.getLocalHost().getHostName()
            + "\n");
    Path proc = rootfs.resolve("proc");
    Files.createDirectories(proc);
    String mount = attempt(List.of("mount", "-t", "proc", "proc", proc.toString()));
    assumeTrue(mount == null, "image chroot test skipped: cannot mount /proc: " + mount);
    Path log = work.resolve("manager.log");
    Process manager = null;
    try {
      List<String> chroot = new ArrayList<>();
      chroot.add("chroot");
      chroot.add("--userspec=" + user);
      chroot.add(rootfs.toString());
      chroot.addAll(command);
      chroot.add("--config");
      chroot.add("/etc/sluice/sluice.yaml");
      ProcessBuilder pb = new ProcessBuilder(chroot).redirectErrorStream(true);
      pb.redirectOutput(log.toFile());
      Map<String, String> env = pb.environment();
      env.clear();
      env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
      config
          .path("Env")
          .forEach(
              e -> {
                String[] kv = e.asText().split("=", 2);
                env.put(kv[0], kv.length > 1 ? kv[1] : "");
              });
      manager = pb.start();
      Process running = manager;

      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
      await()
          .atMost(120, SECONDS)
          .pollInterval(Duration.ofMillis(500))
          .failFast(
              "the manager exited",
              () -> assertThat(running.isAlive()).as("manager alive; log:%n%s", read(log)).isTrue())
          .ignoreExceptions()
          .untilAsserted(
              () -> assertThat(get(http, httpPort, "/readyz").statusCode()).isEqualTo(200));
      assertThat(get(http, httpPort, "/healthz").statusCode()).isEqualTo(200);
      // It reached the database: Sluice's migrations applied, the shard's lease taken.
      Pattern leading =
          Pattern.compile("(?m)^sluice_shard_lease_held\\{[^}]*shard=\"main\"[^}]*} 1");
      await()
          .atMost(60, SECONDS)
          .pollInterval(Duration.ofMillis(500))
          .failFast(
              "the manager exited",
              () -> assertThat(running.isAlive()).as("manager alive; log:%n%s", read(log)).isTrue())
          .untilAsserted(
              () -> {
                HttpResponse<String> metrics = get(http, httpPort, "/metrics");
                assertThat(metrics.statusCode()).isEqualTo(200);
                assertThat(leading.matcher(metrics.body()).find())
                    .as("leads shard main; log:%n%s", read(log))
                    .isTrue();
              });

      long pid = manager.pid();
      run("kill", "-TERM", Long.toString(pid));
      boolean exited = manager.waitFor(30, SECONDS);
      String out = read(log);
      assertThat(exited).as("stopped within 30 s of SIGTERM; log:\n%s", out).isTrue();
      // The JVM's exit status after SIGTERM with its shutdown hooks run: 128 + 15.
      assertThat(manager.exitValue()).as("exit status; log:\n%s", out).isIn(0, 143);
      assertThat(out).as("log").contains("manager image-it stopped");
      System.out.println(
          "image chroot test: ready on /readyz, stopped on SIGTERM with status "
              + manager.exitValue()
              + " (user "
              + user
              + ", "
              + String.join(" ", command)
              + ")");
    } finally {
      if (manager != null && manager.isAlive()) {
        manager.destroyForcibly().waitFor(10, SECONDS);
      }
      unmountQuietly(proc);
    }
  }

  private static HttpResponse<String> get(HttpClient http, int port, String path)
      throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(5))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String read(Path log) {
    try {
      return Files.isRegularFile(log) ? Files.readString(log) : "(no log)";
    } catch (IOException e) {
      return "(unreadable log: " + e + ")";
    }
  }

  private static boolean isRoot() {
    try {
      Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
      return Integer.valueOf(0).equals(uid);
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return false;
    }
  }

  private static boolean onPath(String command) {
    String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    for (String dir : (path + ":/usr/sbin:/sbin").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, command))) {
        return true;
      }
    }
    return false;
  }

  /** Runs the commands in turn; null when all succeed, else the first failure's output. */
  @SafeVarargs
  private static String attempt(List<String>... commands) throws Exception {
    for (List<String> command : commands) {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, SECONDS) || p.exitValue() != 0) {
        return String.join(" ", command) + ": " + out.strip();
      }
    }
    return null;
  }

  private static void unmountQuietly(Path mountPoint) {
    try {
      if (Files.isRegularFile(mountPoint.resolve("self/status"))) {
        new ProcessBuilder("umount", "-l", mountPoint.toString())
            .redirectErrorStream(true)
            .start()
            .waitFor(30, SECONDS);
      }
    } catch (IOException | InterruptedException e) {
      // best effort; a later run unmounts it first
    }
  }

  private static int freePort() throws IOException {
    return FreePorts.belowEphemeralRange();
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(300, SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
    }
  }
}
