package dev.sluice.test;

import dev.sluice.testkit.EmbeddedMariaDb;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A MariaDB or MySQL server in a container, through Testcontainers. Only loaded when Testcontainers
 * is on the class path (it is an optional dependency) and Docker answers.
 */
final class DockerDatabase {
  static final String DEFAULT_IMAGE = "mariadb:10.11";
  private static final int PORT = 3306;
  private static final String PASSWORD = "sluice";
  private static final String DATABASE = "sluice_test";

  private DockerDatabase() {}

  static boolean dockerAvailable() {
    return DockerClientFactory.instance().isDockerAvailable();
  }

  static DatabaseChooser.Chosen start(String image) {
    // MYSQL_* works for both the mysql and the mariadb images; both servers log "ready for
    // connections" twice: once for the init-time server, once for the real one.
    GenericContainer<?> c =
        new GenericContainer<>(DockerImageName.parse(image))
            .withEnv("MYSQL_ROOT_PASSWORD", PASSWORD)
            .withEnv("MYSQL_DATABASE", DATABASE)
            .withCommand("--character-set-server=utf8mb4", "--collation-server=utf8mb4_unicode_ci")
            .withExposedPorts(PORT)
            .waitingFor(Wait.forLogMessage(".*ready for connections.*\\s", 2));
    c.start();
    String url =
        "jdbc:mysql://"
            + c.getHost()
            + ":"
            + c.getMappedPort(PORT)
            + "/"
            + DATABASE
            + "?"
            + EmbeddedMariaDb.URL_OPTIONS;
    return new DatabaseChooser.Chosen(
        new SluiceDatabase(url, "root", PASSWORD, "docker " + image), c::stop);
  }
}
