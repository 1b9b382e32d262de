package dev.sluice.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.receiver.SluiceReceiver;
import dev.sluice.testkit.FreePorts;
import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import dev.sluice.testkit.TestPki;
import java.io.IOException;
import java.io.InputStream;
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
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * <p>The operator's jar follows the walkthrough of docs/getting-started.md, reading its steps from
 * the page ({@link GettingStartedPage}): the database and user of step 0, the page's sluice.yaml,
 * {@code queue create} (the migration it writes is the page's), {@code migrate}, {@code check}, the
 * page's insert, {@code queue stats}, {@code serve} (plain and TLS) with a receiver over gRPC,
 * {@code dead list}. The demo jar runs a short demo to its summary line.
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
    GettingStartedPage page = GettingStartedPage.read();
    String queue = "order_events";
    int grpcPort = freePort();
    int httpPort = freePort();
    // The page's database is "app"; each run takes a fresh one of its own instead (the TLS run's
    // migration would clash with the plain run's, and a server of the developer's may have an app).
    TestDatabase db = TestDatabases.fresh(ShippedJarIT.class);
    String database = db.name();
    Path dir = Files.createDirectories(work.resolve(tls ? "tls" : "plain"));
    TestPki pki = tls ? TestPki.create(dir.resolve("tls"), "shipped") : null;

    // 0. A database and a user, as an administrator (the test database's user).
    List<String> skipped = new ArrayList<>();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (String sql : page.statements("step0")) {
        try {
          s.execute(inDatabase(sql, database));
        } catch (SQLException e) {
          // The embedded MariaDB runs without grant tables (--skip-grant-tables): it refuses
          // CREATE USER and GRANT (ER_OPTION_PREVENTS_STATEMENT) and lets any user in, so there the
          // page's grants are not put to the test; a server with grants runs them.
          if (e.getErrorCode() != ER_OPTION_PREVENTS_STATEMENT) {
            throw e;
          }
          skipped.add(sql);
        }
      }
    }
    assertThat(skipped)
        .as("step 0's statements a server without grant tables refuses")
        .allMatch(sql -> sql.startsWith("CREATE USER") || sql.startsWith("GRANT"));
    // 1. The page's sluice.yaml, on this server's address and free ports (and TLS in one run).
    writeConfig(page, dir, db, grpcPort, httpPort, pki);

    // 2. Create a queue with a migration; 3. apply it; each prints what the page shows.
    for (String step : List.of("queue-create", "migrate")) {
      for (GettingStartedPage.Command command : page.commands(step)) {
        Result r = run(OPERATOR_JAR, dir, command.args().toArray(String[]::new));
        assertThat(r.code).as("%s: %s", command.args(), r).isZero();
        for (String line : command.output()) {
          assertThat(r.out).as("%s prints what the page shows", command.args()).contains(line);
        }
      }
    }
    String migration = Files.readString(dir.resolve("db/migration/V1__create_" + queue + ".sql"));
    assertThat(normalized(migration))
        .as("the migration written is the page's")
        .contains(normalized(page.block("migration-sql")));
    Result check = run(OPERATOR_JAR, dir, "check");
    assertThat(check.code).as(check.toString()).isZero();

    // 4. The page's insert, in a transaction with the application's own table; then a poison
    // event and one rolled back.
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer VARCHAR(64), amount INT)");
      for (String sql : page.statements("insert")) {
        s.execute(sql);
      }
      c.setAutoCommit(false);
      s.executeUpdate("INSERT INTO " + queue + " (order_id, kind) VALUES (2, 'poison')");
      c.commit();
      s.executeUpdate("INSERT INTO " + queue + " (order_id, kind) VALUES (3, 'rolled back')");
      c.rollback();
    }
    // 5. Look at the queue: the page's command, its header.
    GettingStartedPage.Command statsCommand = page.commands("stats").get(0);
    Result stats = run(OPERATOR_JAR, dir, statsCommand.args().toArray(String[]::new));
    assertThat(stats.code).as(stats.toString()).isZero();
    assertThat(stats.out.lines().findFirst().orElse("").split("\\s+"))
        .as("the header the page shows")
        .containsExactly(statsCommand.output().get(0).strip().split("\\s+"));
    assertThat(stats.out).containsPattern("main\\s+" + queue + "\\s+2\\s+0\\s+0\\s+0");

    // 6. Run a manager; 7. a receiver over gRPC takes both events, nacks the poison one until
    // it is dead (max_attempts=3).
    Process serve =
        start(OPERATOR_JAR, dir, page.commands("serve").get(0).args().toArray(String[]::new));
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
      await().atMost(Duration.ofSeconds(60)).until(() -> received.equals(Set.of(1001L, 2L)));
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

  /**
   * The page's sluice.yaml with what a reader changes too: the server's address, the database, free
   * ports, and in the TLS run a {@code tls:} section. The password comes from the environment as
   * the page says ({@link #DB_PASSWORD}).
   */
  private static void writeConfig(
      GettingStartedPage page, Path dir, TestDatabase db, int grpcPort, int httpPort, TestPki pki)
      throws IOException {
    Matcher hostPort = Pattern.compile("//([^/]+)/").matcher(db.url());
    assertThat(hostPort.find()).as("host and port in %s", db.url()).isTrue();
    String y =
        page.block("config")
            .replace("127.0.0.1:3306", hostPort.group(1))
            .replaceFirst("/app\\b", "/" + db.name())
            .replace("grpc_port: 7470", "grpc_port: " + grpcPort)
            .replace("http_port: 7471", "http_port: " + httpPort)
            .replace("manager_id: m1", "manager_id: shipped-" + grpcPort);
    // New queue tables are seen within a second rather than the default 5 s.
    y = y + "discovery_interval: 1s\n";
    if (pki != null) {
      TestPki.Issued cert = pki.server("manager");
      y = y + "tls:\n  cert: " + cert.cert() + "\n  key: " + cert.key() + "\n";
    }
    Files.writeString(dir.resolve("sluice.yaml"), y);
  }

  private static final int ER_OPTION_PREVENTS_STATEMENT = 1290;

  /** The page's password, which its sluice.yaml reads from SLUICE_DB_PASSWORD. */
  private static final String DB_PASSWORD = "change-me";

  /** A statement of the page's step 0 on another database than "app". */
  private static String inDatabase(String sql, String database) {
    return sql.replaceAll("\\bapp\\b", database);
  }

  private static String normalized(String sql) {
    return sql.replaceAll("\\s+", " ").strip();
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
    ProcessBuilder b =
        new ProcessBuilder(command(jar, args))
            .directory(dir.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    b.environment().put("SLUICE_DB_PASSWORD", DB_PASSWORD);
    Process p = b.start();
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
    ProcessBuilder b =
        new ProcessBuilder(command(jar, args))
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(logFile.toFile());
    b.environment().put("SLUICE_DB_PASSWORD", DB_PASSWORD);
    Process p = b.start();
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
    return FreePorts.belowEphemeralRange();
  }
}
