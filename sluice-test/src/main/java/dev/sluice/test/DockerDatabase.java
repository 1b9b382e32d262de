package dev.sluice.test;

import dev.sluice.testkit.EmbeddedMariaDb;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
    // MYSQL_* works for both the mysql and the mariadb images.
    GenericContainer<?> c =
        new GenericContainer<>(DockerImageName.parse(image))
            .withEnv("MYSQL_ROOT_PASSWORD", PASSWORD)
            .withEnv("MYSQL_DATABASE", DATABASE)
            .withCommand(command(image))
            .withExposedPorts(PORT)
            .waitingFor(Wait.forLogMessage(readyLine(image), readyLines(image)));
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

  /** Whether the image is MySQL's (mysql, mysql/mysql-server, percona...) rather than MariaDB's. */
  static boolean isMySql(String image) {
    String name = DockerImageName.parse(image).getRepository().toLowerCase(Locale.ROOT);
    return !name.contains("mariadb");
  }

  /**
   * The server's options: utf8mb4 with the collation the embedded servers use; on MySQL also no
   * binary log (8.0 and later write one by default; MariaDB does not).
   */
  static String[] command(String image) {
    List<String> args =
        new ArrayList<>(
            List.of("--character-set-server=utf8mb4", "--collation-server=utf8mb4_unicode_ci"));
    if (isMySql(image)) {
      args.add("--skip-log-bin");
    }
    return args.toArray(String[]::new);
  }

  /**
   * The log line of the server that serves, not of the one the image's entry point runs first to
   * create the database. MariaDB logs "ready for connections" once per server, its port on the next
   * line: the second such line is the real server's. MySQL logs the port on the same line (0 for
   * the first server, which listens on no port), and its X plugin says "ready for connections" too,
   * with port 33060: the line wanted is mysqld's with port 3306.
   */
  static String readyLine(String image) {
    return isMySql(image)
        ? "(?s).*mysqld: ready for connections.*port: " + PORT + "\\s.*"
        : ".*ready for connections.*\\s";
  }

  /** How many {@link #readyLine} lines mean the server is up. */
  static int readyLines(String image) {
    return isMySql(image) ? 1 : 2;
  }
}
