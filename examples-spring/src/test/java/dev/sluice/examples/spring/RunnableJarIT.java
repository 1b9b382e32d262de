package dev.sluice.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.test.SluiceDatabase;
import dev.sluice.test.SluiceExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shop's runnable jar, started as a newcomer starts it: {@code java -jar
 * target/sluice-examples-spring-*.jar --spring.datasource.url=... --sluice.receiver.targets=...
 * --shop.place-orders=5} in a JVM of its own whose class path is the repackaged jar alone. Runs in
 * {@code verify} after {@code package} built the jar (failsafe), so a class, resource or library
 * missing from the jar fails the build, whatever the test class path holds.
 *
 * <p>The database and the manager are real and live in this JVM (sluice-test): the extension
 * applies only Sluice's own tables, and the application applies its own (orders, shipments and the
 * order_events queue) with its Flyway, as in production; the manager discovers the queue then.
 */
class RunnableJarIT {
  private static final Path JAR =
      Path.of(System.getProperty("shop.jar", "target/sluice-examples-spring-0.1.0-SNAPSHOT.jar"))
          .toAbsolutePath();
  private static final int ORDERS = 5;

  /** sluice.receiver.shutdown-timeout in application.properties: how long a stop may take. */
  private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(15);

  private static final Pattern PLACED = Pattern.compile("placed order \\d+ for \\w+ \\([0-9.]+\\)");
  private static final Pattern SHIPPED =
      Pattern.compile("shipped order \\d+ for \\w+ \\(attempt \\d+\\)");

  @RegisterExtension static SluiceExtension sluice = SluiceExtension.builder().build();

  private Process app;

  @BeforeAll
  static void theJarIsBuilt() {
    assertThat(JAR).as("built by package (spring-boot-maven-plugin repackage)").isRegularFile();
  }

  @AfterEach
  void killALeftOverApp() {
    if (app != null && app.isAlive()) {
      app.destroyForcibly();
    }
  }

  @Test
  void theJarIsRepackagedWithTheShopAndItsResources() throws IOException {
    try (JarFile jar = new JarFile(JAR.toFile())) {
      Manifest m = jar.getManifest();
      assertThat(m.getMainAttributes().getValue("Start-Class"))
          .isEqualTo("dev.sluice.examples.spring.ShopApplication");
      assertThat(m.getMainAttributes().getValue("Main-Class"))
          .startsWith("org.springframework.boot.loader.");
      for (String entry :
          List.of(
              "BOOT-INF/classes/application.properties",
              "BOOT-INF/classes/db/migration/V1__shop.sql",
              "BOOT-INF/classes/dev/sluice/examples/spring/ShopApplication.class")) {
        assertThat(jar.getEntry(entry)).as(entry).isNotNull();
      }
      List<String> libs =
          jar.stream()
              .map(e -> e.getName())
              .filter(n -> n.startsWith("BOOT-INF/lib/"))
              .map(n -> n.substring("BOOT-INF/lib/".length()))
              .toList();
      assertThat(libs)
          .anyMatch(n -> n.startsWith("sluice-spring-boot-starter-"))
          .anyMatch(n -> n.startsWith("mysql-connector-j-"))
          .anyMatch(n -> n.startsWith("flyway-mysql-"))
          .noneMatch(n -> n.startsWith("sluice-test-") || n.startsWith("sluice-manager-"));
    }
  }

  @Test
  void theJarPlacesAndShipsOrdersAndStopsCleanlyOnSigterm() throws Exception {
    SluiceDatabase db = sluice.database();
    // In a directory of its own (no ./application.properties or ./config to pick up), under
    // target/ so that its log stays for a look after a failure.
    Path work = Files.createDirectories(Path.of("target", "runnable-jar-it").toAbsolutePath());
    Path log = work.resolve("shop.log");
    Files.deleteIfExists(log);
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx256m");
    command.add("-jar");
    command.add(JAR.toString());
    command.add("--spring.datasource.url=" + db.url());
    // Empty when the URL carries the credentials (SLUICE_TEST_JDBC_URL): Spring Boot then sends
    // none.
    command.add("--spring.datasource.username=" + (db.user() == null ? "" : db.user()));
    command.add("--spring.datasource.password=" + (db.password() == null ? "" : db.password()));
    command.add("--sluice.receiver.targets=" + sluice.target());
    command.add("--shop.place-orders=" + ORDERS);
    app =
        new ProcessBuilder(command)
            .directory(work.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();

    try {
      await()
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(250))
          .ignoreExceptionsInstanceOf(SQLException.class) // until Flyway made the shipments table
          .until(
              () -> {
                assertThat(app.isAlive())
                    .as("the application exited early (code %s); log:%n%s", exit(app), read(log))
                    .isTrue();
                return count("SELECT COUNT(*) FROM shipments") >= ORDERS;
              });
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          "not "
              + ORDERS
              + " shipments in time; event states: "
              + states()
              + "; the manager serves order_events: "
              + sluice.manager().engine().find("order_events").isPresent()
              + "; log:\n"
              + read(log),
          e);
    }

    assertThat(count("SELECT COUNT(*) FROM orders")).isEqualTo(ORDERS);
    assertThat(count("SELECT COUNT(*) FROM shipments"))
        .as("each order shipped once")
        .isEqualTo(ORDERS);
    assertThat(
            count(
                "SELECT COUNT(*) FROM orders o JOIN shipments s"
                    + " ON s.order_id = o.id AND s.customer = o.customer"))
        .as("each shipment is of a placed order, for its customer")
        .isEqualTo(ORDERS);
    assertThat(count("SELECT COUNT(DISTINCT customer) FROM orders"))
        .as("customers in turn")
        .isEqualTo(3);
    assertThat(count("SELECT COUNT(*) FROM orders WHERE amount <= 0")).isZero();
    List<Long> events = ids("SELECT id FROM order_events");
    assertThat(events).as("one event per order").hasSize(ORDERS);
    for (long eventId : events) {
      sluice.awaitAcked("order_events", eventId);
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(matches(SHIPPED, read(log))).isEqualTo(ORDERS));
    String running = read(log);
    assertThat(matches(PLACED, running)).as(running).isEqualTo(ORDERS);

    // SIGTERM: the listeners stop gracefully, the context closes, the JVM exits.
    long signalled = System.nanoTime();
    app.destroy();
    assertThat(app.waitFor(SHUTDOWN_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
        .as("stopped within %s of SIGTERM; log:%n%s", SHUTDOWN_TIMEOUT, read(log))
        .isTrue();
    Duration took = Duration.ofNanos(System.nanoTime() - signalled);
    String all = read(log);
    // 143 = 128 + SIGTERM: the JVM's exit after its shutdown hooks ran on the signal.
    assertThat(app.exitValue()).as("exit code after %s; log:%n%s", took, all).isIn(0, 143);
    assertThat(all)
        .as("the listener's graceful stop told its manager")
        .contains("notified of shutdown");
    assertThat(all)
        .as("the log")
        .doesNotContain("Exception", "NoClassDefFoundError", "ClassNotFound", "Caused by")
        .doesNotContainPattern("(?m)^\\S+\\s+ERROR\\b");
  }

  private static long count(String sql) throws SQLException {
    try (Connection c = sluice.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static List<Long> ids(String sql) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (Connection c = sluice.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        ids.add(rs.getLong(1));
      }
    }
    return ids;
  }

  private static String states() {
    try {
      return String.valueOf(ids("SELECT state FROM order_events ORDER BY id"));
    } catch (SQLException e) {
      return e.toString();
    }
  }

  private static long matches(Pattern p, String text) {
    return p.matcher(text).results().count();
  }

  private static String exit(Process p) {
    return p.isAlive() ? "running" : String.valueOf(p.exitValue());
  }

  private static String read(Path log) {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }
}
