package dev.sluice.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import dev.sluice.testkit.TestPki;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The jars users run, started as users start them: {@code java -jar target/sluice.jar ...} in a
 * separate JVM whose class path is the shaded jar alone, against a real database. Runs in {@code
 * verify} after {@code package} built the jars (failsafe), so a class, resource or manifest entry
 * missing from what ships fails the build, whatever the test class path has.
 *
 * <p>The operator's jar follows the walkthrough of docs/getting-started.md: {@code queue create},
 * {@code migrate}, {@code check}, {@code queue stats}, {@code serve} (plain and TLS) with a
 * receiver over gRPC, {@code dead list}. The demo jar runs a short demo to its summary line.
 */
class ShippedJarIT {
  private static final Path TARGET = Path.of("target").toAbsolutePath();
  private static final Path OPERATOR_JAR = TARGET.resolve("sluice.jar");
  private static final Path DEMO_JAR = TARGET.resolve("sluice-demo.jar");
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(2);

  @TempDir static Path work;
  private static final List<Process> started = new ArrayList<>();

  @BeforeAll
  static void jarsAreBuilt() {
    assertThat(OPERATOR_JAR).as("built by package").exists();
    assertThat(DEMO_JAR).as("built by package").exists();
  }

  @AfterAll
  static void stopAll() {
    started.forEach(Process::destroyForcibly);
  }

  @Test
  void manifestsNameTheMainClassAndTheJarsCarryTheirResources() throws IOException {
    for (Path jar : List.of(OPERATOR_JAR, DEMO_JAR)) {
      try (JarFile j = new JarFile(jar.toFile())) {
        Manifest m = j.getManifest();
        assertThat(m.getMainAttributes().getValue("Main-Class"))
            .as("%s Main-Class", jar.getFileName())
            .isEqualTo(SluiceMain.class.getName());
        assertThat(m.getMainAttributes().getValue("Multi-Release")).isEqualTo("true");
        for (String resource :
            List.of(
                "META-INF/LICENSE",
                "META-INF/NOTICE",
                "META-INF/services/io.grpc.ManagedChannelProvider",
                "META-INF/services/io.grpc.ServerProvider",
                "logback.xml")) {
          assertThat(j.getEntry(resource)).as("%s in %s", resource, jar.getFileName()).isNotNull();
        }
      }
    }
  }

  @Test
  void helpAndBadUsageAnswerWithoutADatabase() throws Exception {
    Result help = run(OPERATOR_JAR, work, "--help");
    assertThat(help.code).as(help.toString()).isZero();
    assertThat(help.out).contains("serve", "migrate", "queue", "dead", "check");

    Result bad = run(OPERATOR_JAR, work, "no-such-command");
    assertThat(bad.code).as(bad.toString()).isEqualTo(2);
  }

  @ParameterizedTest(name = "tls={0}")
  @ValueSource(booleans = {false, true})
  void theWalkthroughRunsOnTheOperatorJar(boolean tls) throws Exception {
    String queue = tls ? "order_events_tls" : "order_events";
    Path dir = Files.createDirectories(work.resolve(queue));
    int grpcPort = freePort();
    int httpPort = freePort();
    TestPki pki = tls ? TestPki.create(dir.resolve("tls"), "shipped") : null;
    TestDatabase db = TestDatabases.fresh(ShippedJarIT.class);
    writeConfig(dir, db, grpcPort, httpPort, pki);

    // 2. Create a queue with a migration; 3. apply it; check it.
    Result create =
        run(
            OPERATOR_JAR,
            dir,
            "queue",
            "create",
            queue,
            "--column",
            "order_id BIGINT NOT NULL",
            "--column",
            "kind VARCHAR(32) NOT NULL",
            "--option",
            "max_attempts=1");
    assertThat(create.code).as(create.toString()).isZero();
    assertThat(create.out).contains("V", "__create_" + queue + ".sql");
    Result migrate = run(OPERATOR_JAR, dir, "migrate");
    assertThat(migrate.code).as(migrate.toString()).isZero();
    assertThat(migrate.out).contains("main: ok");
    Result check = run(OPERATOR_JAR, dir, "check");
    assertThat(check.code).as(check.toString()).isZero();

    // 4. Insert events in a transaction, one of them rolled back; 5. look at the queue.
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      s.executeUpdate(
          "INSERT INTO " + queue + " (order_id, kind) VALUES (1, 'created'), (2, 'poison')");
      c.commit();
      s.executeUpdate("INSERT INTO " + queue + " (order_id, kind) VALUES (3, 'rolled back')");
      c.rollback();
    }
    Result stats = run(OPERATOR_JAR, dir, "queue", "stats", queue);
    assertThat(stats.code).as(stats.toString()).isZero();
    assertThat(stats.out).containsPattern("main\\s+" + queue + "\\s+2\\s+0\\s+0\\s+0");

    // 6. Run a manager; 7. a receiver over gRPC takes both events, nacks the poison one.
    Process serve = start(OPERATOR_JAR, dir, "serve");
    awaitReady(serve, httpPort, pki, dir);
    Set<Long> received = ConcurrentHashMap.newKeySet();
    var builder =
        SluiceReceiver.builder()
            .target("localhost:" + grpcPort)
            .queue(queue)
            .receiverId("shipped-jar-it")
            .concurrency(2)
            .handler(
                e -> {
                  received.add(e.getLong("order_id"));
                  if ("poison".equals(e.getString("kind"))) {
                    throw new IllegalStateException("poison " + e.id());
                  }
                });
    if (pki != null) {
      builder.tls(pki.caFile());
    }
    try (SluiceReceiver receiver = builder.build().start()) {
      await().atMost(Duration.ofSeconds(60)).until(() -> received.equals(Set.of(1L, 2L)));
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(run(OPERATOR_JAR, dir, "queue", "stats", queue).out)
                      .containsPattern("main\\s+" + queue + "\\s+0\\s+0\\s+1\\s+1"));
    }
    Result dead = run(OPERATOR_JAR, dir, "dead", "list", queue);
    assertThat(dead.code).as(dead.toString()).isZero();
    assertThat(dead.out).contains("poison");

    // SIGTERM: a graceful stop, exit 0.
    serve.destroy();
    assertThat(serve.waitFor(60, TimeUnit.SECONDS)).as("serve stopped on SIGTERM").isTrue();
    assertThat(serve.exitValue()).as("serve exit code; log:%n%s", log(dir, "serve")).isIn(0, 143);
    assertThat(log(dir, "serve")).doesNotContain("NoClassDefFoundError", "ClassNotFound");
  }

  @Test
  void theDemoJarRunsTheDemoToItsSummary() throws Exception {
    Path dir = Files.createDirectories(work.resolve("demo"));
    Result demo = run(DEMO_JAR, dir, "demo", "--events", "300", "--seed", "11");
    assertThat(demo.code).as(demo.toString()).isZero();
    List<String> lines = demo.out.lines().toList();
    assertThat(lines.get(lines.size() - 1))
        .as(demo.toString())
        .matches("demo: committed=\\d+ .* early=0 duplicates=\\d+ lost=0.*");
  }

  // ---------------------------------------------------------------------------------------------

  private static void writeConfig(
      Path dir, TestDatabase db, int grpcPort, int httpPort, TestPki pki) throws IOException {
    StringBuilder y = new StringBuilder();
    y.append("manager_id: shipped-").append(grpcPort).append('\n');
    y.append("grpc_port: ").append(grpcPort).append('\n');
    y.append("http_port: ").append(httpPort).append('\n');
    y.append("migrations: db/migration\n");
    y.append("discovery_interval: 1s\n");
    if (pki != null) {
      TestPki.Issued server = pki.server("manager");
      y.append("tls:\n");
      y.append("  cert: ").append(server.cert()).append('\n');
      y.append("  key: ").append(server.key()).append('\n');
    }
    y.append("shards:\n");
    y.append("  - name: main\n");
    y.append("    url: ").append(db.url()).append('\n');
    if (db.user() != null) {
      y.append("    user: ").append(db.user()).append('\n');
      y.append("    password: \"")
          .append(db.password() == null ? "" : db.password())
          .append("\"\n");
    }
    Files.writeString(dir.resolve("sluice.yaml"), y.toString());
  }

  private static void awaitReady(Process serve, int httpPort, TestPki pki, Path dir)
      throws Exception {
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2));
    if (pki != null) {
      b.sslContext(trusting(pki.caFile()));
    }
    HttpClient http = b.build();
    URI ready =
        URI.create((pki != null ? "https" : "http") + "://localhost:" + httpPort + "/readyz");
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(250))
        .ignoreExceptionsMatching(e -> e instanceof IOException)
        .until(
            () -> {
              assertThat(serve.isAlive())
                  .as("serve exited early (code %s); log:%n%s", exit(serve), log(dir, "serve"))
                  .isTrue();
              return http.send(
                          HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(2)).build(),
                          HttpResponse.BodyHandlers.discarding())
                      .statusCode()
                  == 200;
            });
  }

  private static SSLContext trusting(Path caFile) throws Exception {
    KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
    ks.load(null, null);
    try (InputStream in = Files.newInputStream(caFile)) {
      int i = 0;
      for (var cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        ks.setCertificateEntry("ca" + i++, cert);
      }
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }

  private static String exit(Process p) {
    return p.isAlive() ? "running" : String.valueOf(p.exitValue());
  }

  private record Result(int code, String out, String err) {
    @Override
    public String toString() {
      return "exit " + code + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
    }
  }

  /** Runs {@code java -jar JAR args...} in {@code dir} to its end. */
  private static Result run(Path jar, Path dir, String... args) throws Exception {
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p =
        new ProcessBuilder(command(jar, args))
            .directory(dir.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    started.add(p);
    if (!p.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(
          "timed out: " + String.join(" ", args) + "\n" + Files.readString(err));
    }
    return new Result(
        p.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  /**
   * Starts {@code java -jar JAR args...} in {@code dir}; its output goes to {@code dir/NAME.log}.
   */
  private static Process start(Path jar, Path dir, String... args) throws IOException {
    Path logFile = dir.resolve(args[0] + ".log");
    Process p =
        new ProcessBuilder(command(jar, args))
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(logFile.toFile())
            .start();
    started.add(p);
    return p;
  }

  private static List<String> command(Path jar, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx512m");
    if (!"serve".equals(args[0])) {
      cmd.add("-XX:TieredStopAtLevel=1"); // short commands: start faster, as `time` would show
    }
    cmd.add("-jar");
    cmd.add(jar.toString());
    cmd.addAll(List.of(args));
    return cmd;
  }

  private static String log(Path dir, String name) {
    try {
      return Files.readString(dir.resolve(name + ".log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
